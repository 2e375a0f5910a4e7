// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The registry of live code: two RCU hash tables (by start address, by
 * code index) for lock-free lookups inside the process, and a published
 * view, a slot array under a sequence count, for readers outside it.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

PI_HIDDEN int pi_tsan_gp;

PERFINJECT_API struct perfinject_registry_descriptor
perfinject_registry_descriptor = {
	.magic		 = PERFINJECT_REGISTRY_MAGIC,
	.version	 = PERFINJECT_REGISTRY_VERSION,
	.descriptor_size = sizeof(struct perfinject_registry_descriptor),
	.entry_size	 = sizeof(struct perfinject_registry_entry),
};

/* Serialises writers of the published view, across handles. */
static pthread_mutex_t pub_lock = PTHREAD_MUTEX_INITIALIZER;
static struct perfinject_registry_entry *pub_slots;
static uint64_t pub_cap;	/* slots allocated */
static uint64_t pub_free;	/* first free slot + 1; 0: none */
static uint64_t pub_nr_free;	/* on the free list */
static uint64_t pub_reserved;	/* promised to chunks being checked */

PERFINJECT_API const struct perfinject_registry_descriptor *
perfinject_registry__descriptor(void)
{
	return &perfinject_registry_descriptor;
}

void pi_publish_lock(void)
{
	pthread_mutex_lock(&pub_lock);
}

void pi_publish_unlock(void)
{
	pthread_mutex_unlock(&pub_lock);
}

/*
 * Writer side of the sequence count. The reader is another process
 * reading with process_vm_readv(), so only the order in which our stores
 * become visible matters: the odd count before any data, the data before
 * the even count, and the even count before anything freed afterwards.
 */
#if defined(__SANITIZE_THREAD__)
/* TSAN rejects fences; a full-barrier RMW orders as much here. */
#define pub_fence(seq)	__atomic_fetch_add(seq, 0, __ATOMIC_SEQ_CST)
#else
#define pub_fence(seq)	__atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

static void pub_begin(void)
{
	struct perfinject_registry_descriptor *d =
		&perfinject_registry_descriptor;

	__atomic_store_n(&d->seq, d->seq + 1, __ATOMIC_RELAXED);
	pub_fence(&d->seq);
}

static void pub_end(void)
{
	struct perfinject_registry_descriptor *d =
		&perfinject_registry_descriptor;

	__atomic_store_n(&d->seq, d->seq + 1, __ATOMIC_RELEASE);
	pub_fence(&d->seq);
}

/* Make room for @n more live entries. Called with pub_lock held. */
static int pub_reserve_locked(uint64_t n)
{
	struct perfinject_registry_descriptor *d =
		&perfinject_registry_descriptor;
	struct perfinject_registry_entry *slots, *old;
	uint64_t avail = pub_nr_free + (pub_cap - d->nr_slots) - pub_reserved;
	uint64_t cap;

	if (avail < n) {
		cap = pub_cap ? pub_cap : 64;
		while (cap - d->nr_slots + pub_nr_free - pub_reserved < n)
			cap *= 2;
		slots = calloc(cap, sizeof(*slots));
		if (!slots)
			return -ENOMEM;
		if (d->nr_slots)
			memcpy(slots, pub_slots, d->nr_slots * sizeof(*slots));
		old = pub_slots;
		pub_begin();
		pub_slots = slots;
		pub_cap = cap;
		d->entries = (uint64_t)(uintptr_t)slots;
		pub_end();
		free(old);
	}
	pub_reserved += n;
	return 0;
}

int pi_publish_reserve(uint64_t n)
{
	int err;

	if (!n)
		return 0;
	pthread_mutex_lock(&pub_lock);
	err = pub_reserve_locked(n);
	pthread_mutex_unlock(&pub_lock);
	return err;
}

void pi_publish_unreserve(uint64_t n)
{
	pthread_mutex_lock(&pub_lock);
	pub_reserved -= n;
	pthread_mutex_unlock(&pub_lock);
}

/* In a write section, with a reservation. */
static uint64_t pub_slot_get(void)
{
	struct perfinject_registry_descriptor *d =
		&perfinject_registry_descriptor;
	uint64_t slot;

	pub_reserved--;
	if (pub_free) {
		slot = pub_free - 1;
		/* A free slot's addr links the free list. */
		pub_free = pub_slots[slot].addr;
		pub_nr_free--;
	} else {
		slot = d->nr_slots++;
	}
	return slot;
}

static void pub_slot_set(uint64_t slot, const struct pi_entry *e)
{
	struct perfinject_registry_entry *s = &pub_slots[slot];

	s->addr = e->addr;
	s->len = e->len;
	s->code_index = e->code_index;
	s->name_len = e->name_len;
	s->name = (uint64_t)(uintptr_t)e->name;
}

static void pub_slot_put(uint64_t slot)
{
	struct perfinject_registry_entry *s = &pub_slots[slot];

	memset(s, 0, sizeof(*s));
	s->addr = pub_free;
	pub_free = slot + 1;
	pub_nr_free++;
}

static uint64_t pi_hash(uint64_t key)
{
	/* The splitmix64 finaliser: code addresses share their low bits. */
	key ^= key >> 30;
	key *= 0xbf58476d1ce4e5b9ULL;
	key ^= key >> 27;
	key *= 0x94d049bb133111ebULL;
	key ^= key >> 31;
	return key;
}

static int match_addr(struct cds_lfht_node *node, const void *key)
{
	struct pi_entry *e = caa_container_of(node, struct pi_entry,
					      addr_node);

	/* Lookups read entries that other threads published. */
	pi_tsan_acquire(e);
	return e->addr == *(const uint64_t *)key;
}

static int match_index(struct cds_lfht_node *node, const void *key)
{
	struct pi_entry *e = caa_container_of(node, struct pi_entry,
					      index_node);

	/* Lookups read entries that other threads published. */
	pi_tsan_acquire(e);
	return e->code_index == *(const uint64_t *)key;
}

int pi_registry_init(struct perfinject *pi)
{
	pi->by_addr = cds_lfht_new(64, 64, 0,
				   CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				   NULL);
	pi->by_index = cds_lfht_new(64, 64, 0,
				    CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				    NULL);
	if (!pi->by_addr || !pi->by_index) {
		if (pi->by_addr)
			cds_lfht_destroy(pi->by_addr, NULL);
		if (pi->by_index)
			cds_lfht_destroy(pi->by_index, NULL);
		return -ENOMEM;
	}
	return 0;
}

/* In a read-side critical section. */
struct pi_entry *pi_lookup_addr(struct perfinject *pi, uint64_t addr)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;
	struct pi_entry *e;

	cds_lfht_lookup(pi->by_addr, pi_hash(addr), match_addr, &addr, &iter);
	node = cds_lfht_iter_get_node(&iter);
	if (!node)
		return NULL;
	e = caa_container_of(node, struct pi_entry, addr_node);
	pi_tsan_acquire(e);
	return e;
}

struct pi_entry *pi_lookup_index(struct perfinject *pi, uint64_t code_index)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;
	struct pi_entry *e;

	cds_lfht_lookup(pi->by_index, pi_hash(code_index), match_index,
			&code_index, &iter);
	node = cds_lfht_iter_get_node(&iter);
	if (!node)
		return NULL;
	e = caa_container_of(node, struct pi_entry, index_node);
	pi_tsan_acquire(e);
	return e;
}

struct pi_entry *pi_entry_new(uint64_t addr, uint64_t len,
			      uint64_t code_index, const char *name,
			      uint32_t name_len)
{
	struct pi_entry *e = malloc(sizeof(*e) + name_len + 1);

	if (!e)
		return NULL;
	cds_lfht_node_init(&e->addr_node);
	cds_lfht_node_init(&e->index_node);
	e->addr = addr;
	e->len = len;
	e->code_index = code_index;
	e->dump_index = 0;
	e->slot = 0;
	e->name_len = name_len;
	memcpy(e->name, name, name_len);
	e->name[name_len] = '\0';
	return e;
}

void pi_entry_free(struct pi_entry *e)
{
	free(e);
}

static void pi_entry_free_rcu(struct rcu_head *head)
{
	struct pi_entry *e = caa_container_of(head, struct pi_entry, rcu);

	pi_tsan_acquire(&pi_tsan_gp);
	free(e);
}

static void pi_entry_retire(struct pi_entry *e)
{
	urcu_bp_call_rcu(&e->rcu, pi_entry_free_rcu);
}

static void pi_entry_insert(struct perfinject *pi, struct pi_entry *e)
{
	struct cds_lfht_node *dup;

	pi_tsan_release(e);
	dup = cds_lfht_add_unique(pi->by_addr, pi_hash(e->addr), match_addr,
				  &e->addr, &e->addr_node);
	(void)dup; /* checked when the change was resolved */
	if (e->code_index)
		cds_lfht_add(pi->by_index, pi_hash(e->code_index),
			     &e->index_node);
}

static void pi_entry_remove(struct perfinject *pi, struct pi_entry *e)
{
	cds_lfht_del(pi->by_addr, &e->addr_node);
	if (e->code_index)
		cds_lfht_del(pi->by_index, &e->index_node);
	pub_slot_put(e->slot);
	pi_entry_retire(e);
}

/*
 * Apply checked changes to the tables and the published view. Called
 * with pi->lock and a read-side lock held, and a reservation of a slot
 * for each LOAD.
 */
void pi_registry_commit(struct perfinject *pi, struct pi_change *chg,
			unsigned int nr)
{
	struct perfinject_registry_descriptor *d =
		&perfinject_registry_descriptor;
	struct pi_entry *old, *e;
	unsigned int i;

	pthread_mutex_lock(&pub_lock);
	pub_begin();
	for (i = 0; i < nr; i++) {
		const struct perf_jit_code_entry *k = &chg[i].kentry;

		switch (k->op) {
		case PERF_JIT_CODE_LOAD:
			e = chg[i].add;
			e->slot = pub_slot_get();
			pub_slot_set(e->slot, e);
			pi_entry_insert(pi, e);
			pi->nr_live++;
			d->nr_live++;
			break;
		case PERF_JIT_CODE_UNLOAD:
			old = pi_lookup_addr(pi, k->addr);
			pi_entry_remove(pi, old);
			pi->nr_live--;
			d->nr_live--;
			break;
		case PERF_JIT_CODE_MOVE:
			old = pi_lookup_addr(pi, k->addr);
			e = chg[i].add;
			e->dump_index = old->dump_index;
			/* A moved entry keeps its slot: one store moves it. */
			e->slot = old->slot;
			pub_slots[e->slot].addr = e->addr;
			pub_slots[e->slot].name = (uint64_t)(uintptr_t)e->name;
			pi_tsan_release(e);
			cds_lfht_add_unique(pi->by_addr, pi_hash(e->addr),
					    match_addr, &e->addr,
					    &e->addr_node);
			cds_lfht_del(pi->by_addr, &old->addr_node);
			if (e->code_index) {
				struct cds_lfht_iter iter;

				cds_lfht_lookup(pi->by_index,
						pi_hash(e->code_index),
						match_index, &e->code_index,
						&iter);
				cds_lfht_replace(pi->by_index, &iter,
						 pi_hash(e->code_index),
						 match_index, &e->code_index,
						 &e->index_node);
			}
			pi_entry_retire(old);
			break;
		}
	}
	pub_end();
	pthread_mutex_unlock(&pub_lock);
}

/* Remove everything; pi->lock held, no other user of @pi. */
void pi_registry_fini(struct perfinject *pi)
{
	struct perfinject_registry_descriptor *d =
		&perfinject_registry_descriptor;
	struct cds_lfht_iter iter;
	struct pi_entry *e;

	pi_read_lock();
	pthread_mutex_lock(&pub_lock);
	pub_begin();
	cds_lfht_for_each_entry(pi->by_addr, &iter, e, addr_node) {
		pi_entry_remove(pi, e);
		d->nr_live--;
	}
	pub_end();
	pthread_mutex_unlock(&pub_lock);
	pi_read_unlock();
	pi->nr_live = 0;
	urcu_bp_barrier();
	cds_lfht_destroy(pi->by_addr, NULL);
	cds_lfht_destroy(pi->by_index, NULL);
}
