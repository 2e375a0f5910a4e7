/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A handle's indexes of its live entries (struct pi_entry): by start
 * address, pi->by_addr, and by code_index, pi->by_index. Only writers
 * change them, under pi->lock; an entry is in an index whole or not at
 * all, and is not changed while it is in one.
 *
 * struct pi_index is an open-addressing table (index.c): whoever reads
 * or writes one holds pi->lock. The address index, the one that
 * perfinject__find() reads, is a struct pi_addr_index: a struct pi_index
 * too, or with URCU=1 a table that readers read without pi->lock
 * (index_lfht.c).
 *
 * Included by internal.h.
 */
#ifndef __PERFINJECT_INDEX_H
#define __PERFINJECT_INDEX_H

#include <pthread.h>
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

#ifdef PI_URCU
#include <urcu-bp.h>
#include <urcu/rculfhash.h>

/*
 * URCU=1: the address index is a cds_lfht (liburcu-cds) under urcu-bp,
 * the flavour that asks nothing of the threads that read: a library
 * cannot make the runtime that loads it register its threads (LTTng-UST
 * uses it for the same reason). Writers still change the index under
 * pi->lock, one at a time per handle. Readers, perfinject__find() and
 * perfinject__find_info(), take no lock: they look up inside a
 * read-side critical section, and an entry that has left the index is
 * freed only after a grace period (pi_addr_wait_readers(), registry.c).
 *
 * The writer grows the table in pi_addr_reserve(), not cds_lfht's
 * resize worker (no CDS_LFHT_AUTO_RESIZE): the library starts no thread
 * of its own. liburcu still runs a large resize on helper threads that
 * it starts and joins inside the call.
 *
 * Without _LGPL_SOURCE: the read-side primitives are calls into
 * liburcu-bp, not inlined LGPL code, so the BSD-2-Clause option holds
 * for this build too.
 */
#define PI_ADDR_LOCKLESS_READS	true

struct pi_addr_index {
	struct cds_lfht		*ht;
	size_t			nr;		/* under pi->lock */
	unsigned long		buckets;	/* as last resized to */
};

PI_HIDDEN int pi_addr_init(struct pi_addr_index *ax);
PI_HIDDEN void pi_addr_fini(struct pi_addr_index *ax);
PI_HIDDEN int pi_addr_reserve(struct pi_addr_index *ax, size_t more);
PI_HIDDEN void pi_addr_insert(struct pi_addr_index *ax, struct pi_entry *e);
PI_HIDDEN void pi_addr_delete(struct pi_addr_index *ax, struct pi_entry *e);
PI_HIDDEN struct pi_entry *pi_addr_lookup(struct pi_addr_index *ax,
					  uint64_t addr);
PI_HIDDEN void pi_addr_for_each(struct pi_addr_index *ax, pi_index_fn fn,
				void *ctx);

static inline size_t pi_addr_count(const struct pi_addr_index *ax)
{
	return ax->nr;
}

/* A reader: perfinject__find() and the like. @writers is not taken. */
static inline void pi_addr_read_lock(pthread_mutex_t *writers)
{
	(void)writers;
	urcu_bp_read_lock();
}

static inline void pi_addr_read_unlock(pthread_mutex_t *writers)
{
	(void)writers;
	urcu_bp_read_unlock();
}

/*
 * A writer, under pi->lock, around its lookups, inserts, deletes and
 * walks of the index: cds_lfht asks its updaters for a read-side
 * critical section too. One around a chunk's worth of them, not one per
 * call: urcu-bp's are calls into the library, some 20 ns a pair. Nothing
 * inside may wait for a grace period, nor grow the index.
 */
static inline void pi_addr_walk_begin(void)
{
	urcu_bp_read_lock();
}

static inline void pi_addr_walk_end(void)
{
	urcu_bp_read_unlock();
}

/*
 * Wait until no reader can hold an entry that left the index before
 * the call. Never inside a read-side critical section.
 */
static inline void pi_addr_wait_readers(void)
{
	urcu_bp_synchronize_rcu();
}

/*
 * fork(): urcu-bp's locks are held across it, and the child forgets the
 * readers of threads it does not have (a grace period would wait for
 * them for ever). After every lock of the library: a writer may wait for
 * a grace period under pi->lock.
 */
static inline void pi_addr_before_fork(void)
{
	urcu_bp_before_fork();
}

static inline void pi_addr_after_fork_parent(void)
{
	urcu_bp_after_fork_parent();
}

static inline void pi_addr_after_fork_child(void)
{
	urcu_bp_after_fork_child();
}

#else /* !PI_URCU */

/*
 * The address index: a struct pi_index keyed by addr. Its readers hold
 * pi->lock like its writers, so an entry that leaves it can be freed at
 * once.
 */
#define PI_ADDR_LOCKLESS_READS	false

struct pi_addr_index {
	struct pi_index		t;
};

static inline int pi_addr_init(struct pi_addr_index *ax)
{
	pi_index_init(&ax->t, false);
	return 0;
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

static inline void pi_addr_read_lock(pthread_mutex_t *writers)
{
	pthread_mutex_lock(writers);
}

static inline void pi_addr_read_unlock(pthread_mutex_t *writers)
{
	pthread_mutex_unlock(writers);
}

static inline void pi_addr_walk_begin(void)
{
}

static inline void pi_addr_walk_end(void)
{
}

static inline void pi_addr_wait_readers(void)
{
}

static inline void pi_addr_before_fork(void)
{
}

static inline void pi_addr_after_fork_parent(void)
{
}

static inline void pi_addr_after_fork_child(void)
{
}

#endif /* PI_URCU */

#endif /* __PERFINJECT_INDEX_H */
