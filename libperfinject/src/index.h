/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A handle's indexes of its live entries (struct pi_entry): by start
 * address, pi->by_addr, and by code_index, pi->by_index. Only writers
 * change them, under pi->lock; an entry is in an index whole or not at
 * all, and is not changed while it is in one.
 *
 * struct pi_index is an open-addressing table (index.c): whoever reads
 * or writes one holds pi->lock. The address index, the one that
 * perfinject__find() reads, is a struct pi_addr_index, so that it can
 * have another implementation than by_index.
 *
 * Included by internal.h.
 */
#ifndef __PERFINJECT_INDEX_H
#define __PERFINJECT_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pi_entry;

typedef void (*pi_index_fn)(struct pi_entry *e, void *ctx);

/* A slot holds its key beside the entry: a probe reads nothing else. */
struct pi_slot {
	uint64_t		key;
	struct pi_entry		*e;		/* NULL: empty */
};

struct pi_index {
	struct pi_slot		*slots;
	size_t			mask;		/* capacity - 1; 0: none */
	size_t			nr;
	bool			by_index;	/* keyed by code_index */
};

PI_HIDDEN void pi_index_init(struct pi_index *ix, bool by_index);
PI_HIDDEN void pi_index_fini(struct pi_index *ix);
PI_HIDDEN int pi_index_reserve(struct pi_index *ix, size_t more);
PI_HIDDEN void pi_index_insert(struct pi_index *ix, struct pi_entry *e);
PI_HIDDEN void pi_index_delete(struct pi_index *ix, struct pi_entry *e);
PI_HIDDEN struct pi_entry *pi_index_lookup(const struct pi_index *ix,
					   uint64_t key);
PI_HIDDEN void pi_index_for_each(const struct pi_index *ix, pi_index_fn fn,
				 void *ctx);

static inline size_t pi_index_count(const struct pi_index *ix)
{
	return ix->nr;
}

/*
 * The address index: a struct pi_index keyed by addr. Its readers hold
 * pi->lock like its writers.
 */
struct pi_addr_index {
	struct pi_index		t;
};

static inline void pi_addr_init(struct pi_addr_index *ax)
{
	pi_index_init(&ax->t, false);
}

/* Free the index, not the entries it holds. */
static inline void pi_addr_fini(struct pi_addr_index *ax)
{
	pi_index_fini(&ax->t);
}

/* Room for @more further entries: pi_addr_insert() cannot fail then. */
static inline int pi_addr_reserve(struct pi_addr_index *ax, size_t more)
{
	return pi_index_reserve(&ax->t, more);
}

static inline void pi_addr_insert(struct pi_addr_index *ax,
				  struct pi_entry *e)
{
	pi_index_insert(&ax->t, e);
}

static inline void pi_addr_delete(struct pi_addr_index *ax,
				  struct pi_entry *e)
{
	pi_index_delete(&ax->t, e);
}

static inline struct pi_entry *pi_addr_lookup(struct pi_addr_index *ax,
					      uint64_t addr)
{
	return pi_index_lookup(&ax->t, addr);
}

static inline void pi_addr_for_each(struct pi_addr_index *ax,
				    pi_index_fn fn, void *ctx)
{
	pi_index_for_each(&ax->t, fn, ctx);
}

static inline size_t pi_addr_count(const struct pi_addr_index *ax)
{
	return pi_index_count(&ax->t);
}

#endif /* __PERFINJECT_INDEX_H */
