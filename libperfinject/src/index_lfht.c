// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * URCU=1: the address index as a cds_lfht under urcu-bp (index.h).
 * Writers hold pi->lock. Lookups, inserts, deletes and walks run inside
 * a read-side critical section, as cds_lfht asks: a reader's
 * (pi_addr_read_lock()) or a writer's (pi_addr_walk_begin()). An entry
 * is linked through its addr_node.
 */
#include <stdlib.h>

#include "internal.h"

/* Buckets of a new table, and the least it grows by. */
#define PI_LFHT_MIN_BUCKETS	64

static inline struct pi_entry *pi_node_entry(struct cds_lfht_node *node)
{
	return node ? caa_container_of(node, struct pi_entry, addr_node) :
		      NULL;
}

static int pi_addr_match(struct cds_lfht_node *node, const void *key)
{
	return pi_node_entry(node)->addr == *(const uint64_t *)key;
}

int pi_addr_init(struct pi_addr_index *ax)
{
	ax->nr = 0;
	ax->buckets = PI_LFHT_MIN_BUCKETS;
	ax->ht = cds_lfht_new_flavor(PI_LFHT_MIN_BUCKETS, PI_LFHT_MIN_BUCKETS,
				     0, 0, &urcu_bp_flavor, NULL);
	return ax->ht ? 0 : -ENOMEM;
}

/*
 * Free the index, not the entries it held: the caller frees them after a
 * grace period. No reader may use the handle any more.
 */
void pi_addr_fini(struct pi_addr_index *ax)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;

	if (!ax->ht)
		return;
	urcu_bp_read_lock();
	cds_lfht_for_each(ax->ht, &iter, node)
		cds_lfht_del(ax->ht, node);
	urcu_bp_read_unlock();
	cds_lfht_destroy(ax->ht, NULL);
	ax->ht = NULL;
	ax->nr = 0;
}

/*
 * At most one entry a bucket on average, grown by doubling: chains stay
 * short, and a load never waits for the table to grow.
 * cds_lfht_resize() must not be called inside a read-side critical
 * section; pi_registry_reserve() is not in one.
 */
int pi_addr_reserve(struct pi_addr_index *ax, size_t more)
{
	unsigned long want = ax->buckets;

	if (ax->nr + more <= want)
		return 0;
	if (ax->nr + more > (SIZE_MAX >> 2))
		return -ENOMEM;
	while (want < ax->nr + more)
		want *= 2;
	cds_lfht_resize(ax->ht, want);
	ax->buckets = want;
	return 0;
}

/*
 * Publish @e: everything in it is written before, and cds_lfht_add()
 * orders those stores before the node is reachable (rcu_assign_pointer).
 */
void pi_addr_insert(struct pi_addr_index *ax, struct pi_entry *e)
{
	cds_lfht_add(ax->ht, pi_hash(e->addr), &e->addr_node);
	ax->nr++;
}

/*
 * Unlink @e, which is in the index. Readers may still hold it until a
 * grace period has passed: it may not be freed, nor inserted again,
 * before (cds_lfht reuses the node's link).
 */
void pi_addr_delete(struct pi_addr_index *ax, struct pi_entry *e)
{
	cds_lfht_del(ax->ht, &e->addr_node);
	ax->nr--;
}

/*
 * The entry at @addr, or NULL. A writer's, under pi->lock: it stays
 * valid until the writer removes it. A reader's, inside its read-side
 * critical section: until the section ends.
 */
struct pi_entry *pi_addr_lookup(struct pi_addr_index *ax, uint64_t addr)
{
	struct cds_lfht_iter iter;

	cds_lfht_lookup(ax->ht, pi_hash(addr), pi_addr_match, &addr, &iter);
	return pi_node_entry(cds_lfht_iter_get_node(&iter));
}

/* Call @fn for every entry; @fn may not change the index. */
void pi_addr_for_each(struct pi_addr_index *ax, pi_index_fn fn, void *ctx)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;

	cds_lfht_for_each(ax->ht, &iter, node)
		fn(pi_node_entry(node), ctx);
}
