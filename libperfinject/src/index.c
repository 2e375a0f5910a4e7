// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The handle's tables (index.h): open addressing with linear probing, at
 * most half full, and deletion by shifting the entries after the hole
 * back (so no tombstones). Under pi->lock, like everything that reads
 * them.
 */
#include <stdlib.h>

#include "internal.h"

static inline uint64_t pi_key(const struct pi_index *ix,
			      const struct pi_entry *e)
{
	return ix->by_index ? e->code_index : e->addr;
}

static struct pi_slot *pi_index_slot(const struct pi_index *ix, uint64_t key)
{
	size_t i;

	if (!ix->mask)
		return NULL;
	for (i = pi_hash(key) & ix->mask; ix->slots[i].e;
	     i = (i + 1) & ix->mask)
		if (ix->slots[i].key == key)
			return &ix->slots[i];
	return NULL;
}

static void pi_index_put_key(struct pi_index *ix, uint64_t key,
			     struct pi_entry *e)
{
	size_t i;

	for (i = pi_hash(key) & ix->mask; ix->slots[i].e;
	     i = (i + 1) & ix->mask)
		;
	ix->slots[i].key = key;
	ix->slots[i].e = e;
	ix->nr++;
}

void pi_index_init(struct pi_index *ix, bool by_index)
{
	ix->slots = NULL;
	ix->mask = 0;
	ix->nr = 0;
	ix->by_index = by_index;
}

/* Free the table, not the entries it holds. */
void pi_index_fini(struct pi_index *ix)
{
	free(ix->slots);
	pi_index_init(ix, ix->by_index);
}

/* Room for @more further entries without growing in pi_index_insert(). */
int pi_index_reserve(struct pi_index *ix, size_t more)
{
	struct pi_slot *old = ix->slots;
	size_t cap = ix->mask + 1, old_cap = ix->mask ? cap : 0, i;

	if (ix->nr + more <= old_cap / 2)
		return 0;
	if (ix->nr + more > SIZE_MAX / 4 / sizeof(*old))
		return -ENOMEM;
	cap = old_cap ? old_cap : 64;
	while (ix->nr + more > cap / 2)
		cap *= 2;
	ix->slots = calloc(cap, sizeof(*ix->slots));
	if (!ix->slots) {
		ix->slots = old;
		return -ENOMEM;
	}
	ix->mask = cap - 1;
	ix->nr = 0;
	for (i = 0; i < old_cap; i++)
		if (old[i].e)
			pi_index_put_key(ix, old[i].key, old[i].e);
	free(old);
	return 0;
}

void pi_index_insert(struct pi_index *ix, struct pi_entry *e)
{
	pi_index_put_key(ix, pi_key(ix, e), e);
}

/* Remove @e, which is in @ix. */
void pi_index_delete(struct pi_index *ix, struct pi_entry *e)
{
	struct pi_slot *slot = pi_index_slot(ix, pi_key(ix, e));
	size_t hole = slot - ix->slots, i = hole, home;

	ix->slots[hole].e = NULL;
	ix->nr--;
	for (;;) {
		i = (i + 1) & ix->mask;
		if (!ix->slots[i].e)
			return;
		home = pi_hash(ix->slots[i].key) & ix->mask;
		/* Move it back unless its home lies in (hole, i]. */
		if (((i - home) & ix->mask) >= ((i - hole) & ix->mask)) {
			ix->slots[hole] = ix->slots[i];
			ix->slots[i].e = NULL;
			hole = i;
		}
	}
}

struct pi_entry *pi_index_lookup(const struct pi_index *ix, uint64_t key)
{
	struct pi_slot *slot = pi_index_slot(ix, key);

	return slot ? slot->e : NULL;
}

/* Call @fn for every entry, in table order; @fn must not change @ix. */
void pi_index_for_each(const struct pi_index *ix, pi_index_fn fn, void *ctx)
{
	size_t i;

	for (i = 0; ix->mask && i <= ix->mask; i++)
		if (ix->slots[i].e)
			fn(ix->slots[i].e, ctx);
}
