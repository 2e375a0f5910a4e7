// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The registry of live code: two hash tables (by start address, by code
 * index) for lookups inside the process, and a published view, a slot
 * array under a sequence count, for readers outside it.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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

/*
 * The handle's tables: open addressing with linear probing, at most half
 * full, and deletion by shifting the entries after the hole back (so no
 * tombstones). Under pi->lock, like everything that reads them.
 */
static inline uint64_t pi_key(const struct pi_table *t,
			      const struct pi_entry *e)
{
	return t->by_index ? e->code_index : e->addr;
}

static struct pi_entry **pi_table_slot(struct pi_table *t, uint64_t key)
{
	size_t i;

	if (!t->mask)
		return NULL;
	for (i = pi_hash(key) & t->mask; t->slots[i]; i = (i + 1) & t->mask)
		if (pi_key(t, t->slots[i]) == key)
			return &t->slots[i];
	return NULL;
}

static void pi_table_put(struct pi_table *t, struct pi_entry *e)
{
	size_t i;

	for (i = pi_hash(pi_key(t, e)) & t->mask; t->slots[i];
	     i = (i + 1) & t->mask)
		;
	t->slots[i] = e;
	t->nr++;
}

/* Room for @more further entries without growing in pi_table_put(). */
static int pi_table_reserve(struct pi_table *t, size_t more)
{
	struct pi_entry **old = t->slots;
	size_t cap = t->mask + 1, old_cap = t->mask ? cap : 0, i;

	if (t->nr + more <= old_cap / 2)
		return 0;
	if (t->nr + more > SIZE_MAX / 4 / sizeof(*old))
		return -ENOMEM;
	cap = old_cap ? old_cap : 64;
	while (t->nr + more > cap / 2)
		cap *= 2;
	t->slots = calloc(cap, sizeof(*t->slots));
	if (!t->slots) {
		t->slots = old;
		return -ENOMEM;
	}
	t->mask = cap - 1;
	t->nr = 0;
	for (i = 0; i < old_cap; i++)
		if (old[i])
			pi_table_put(t, old[i]);
	free(old);
	return 0;
}

static void pi_table_del(struct pi_table *t, struct pi_entry **slot)
{
	size_t hole = slot - t->slots, i = hole, home;

	t->slots[hole] = NULL;
	t->nr--;
	for (;;) {
		i = (i + 1) & t->mask;
		if (!t->slots[i])
			return;
		home = pi_hash(pi_key(t, t->slots[i])) & t->mask;
		/* Move it back unless its home lies in (hole, i]. */
		if (((i - home) & t->mask) >= ((i - hole) & t->mask)) {
			t->slots[hole] = t->slots[i];
			t->slots[i] = NULL;
			hole = i;
		}
	}
}

int pi_registry_init(struct perfinject *pi)
{
	pi->by_addr.by_index = false;
	pi->by_index.by_index = true;
	return 0;
}

struct pi_entry *pi_lookup_addr(struct perfinject *pi, uint64_t addr)
{
	struct pi_entry **slot = pi_table_slot(&pi->by_addr, addr);

	return slot ? *slot : NULL;
}

struct pi_entry *pi_lookup_index(struct perfinject *pi, uint64_t code_index)
{
	struct pi_entry **slot = pi_table_slot(&pi->by_index, code_index);

	return slot ? *slot : NULL;
}

/* Make sure pi_registry_commit() of @loads more loads cannot fail. */
int pi_registry_reserve(struct perfinject *pi, size_t loads)
{
	int err;

	err = pi_table_reserve(&pi->by_addr, loads);
	if (!err)
		err = pi_table_reserve(&pi->by_index, loads);
	return err;
}

struct pi_entry *pi_entry_new(uint64_t addr, uint64_t len,
			      uint64_t code_index, const char *name,
			      uint32_t name_len)
{
	struct pi_entry *e = malloc(sizeof(*e) + name_len + 1);

	if (!e)
		return NULL;
	e->addr = addr;
	e->len = len;
	e->code_index = code_index;
	e->dump_index = 0;
	e->slot = 0;
	e->kind = 0;
	e->tier = 0;
	e->next_free = NULL;
	e->name_len = name_len;
	memcpy(e->name, name, name_len);
	e->name[name_len] = '\0';
	return e;
}

void pi_entry_free(struct pi_entry *e)
{
	free(e);
}

static void pi_entry_insert(struct perfinject *pi, struct pi_entry *e)
{
	pi_table_put(&pi->by_addr, e);
	if (e->code_index)
		pi_table_put(&pi->by_index, e);
}

static void pi_entry_remove(struct perfinject *pi, struct pi_entry *e)
{
	pi_table_del(&pi->by_addr, pi_table_slot(&pi->by_addr, e->addr));
	if (e->code_index)
		pi_table_del(&pi->by_index,
			     pi_table_slot(&pi->by_index, e->code_index));
}

/*
 * Apply checked changes to the tables and the published view. Called
 * with pi->lock held, a reservation of a slot for each LOAD and room in
 * the tables (pi_registry_reserve()). Entries that leave go to pi->gone,
 * freed by pi_registry_reap() after the write section (a reader outside
 * may still be copying their names, and the changed sequence count tells
 * it so) and after the files took their names.
 */
void pi_registry_commit(struct perfinject *pi, struct pi_change *chg,
			unsigned int nr)
{
	struct perfinject_registry_descriptor *d =
		&perfinject_registry_descriptor;
	struct pi_entry *old, *e, *gone = NULL;
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
			d->nr_live++;
			break;
		case PERF_JIT_CODE_UNLOAD:
			old = pi_lookup_addr(pi, k->addr);
			pi_entry_remove(pi, old);
			pub_slot_put(old->slot);
			old->next_free = gone;
			gone = old;
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
			pi_entry_remove(pi, old);
			pi_entry_insert(pi, e);
			old->next_free = gone;
			gone = old;
			break;
		}
	}
	pub_end();
	pthread_mutex_unlock(&pub_lock);
	__atomic_store_n(&pi->nr_live, pi->by_addr.nr, __ATOMIC_RELAXED);
	pi->gone = gone;
}

/* Free what the last commit retired, once the files have their names. */
void pi_registry_reap(struct perfinject *pi)
{
	struct pi_entry *e;

	while (pi->gone) {
		e = pi->gone->next_free;
		free(pi->gone);
		pi->gone = e;
	}
}

/* Call @fn for every live entry, in table order; pi->lock held. */
void pi_registry_for_each(struct perfinject *pi,
			  void (*fn)(struct pi_entry *e, void *ctx), void *ctx)
{
	struct pi_table *t = &pi->by_addr;
	size_t i;

	for (i = 0; t->mask && i <= t->mask; i++)
		if (t->slots[i])
			fn(t->slots[i], ctx);
}

/* Remove everything; pi->lock held, no other user of @pi. */
void pi_registry_fini(struct perfinject *pi)
{
	struct perfinject_registry_descriptor *d =
		&perfinject_registry_descriptor;
	struct pi_table *t = &pi->by_addr;
	struct pi_entry *gone = NULL, *e;
	size_t i;

	pthread_mutex_lock(&pub_lock);
	pub_begin();
	for (i = 0; t->mask && i <= t->mask; i++) {
		e = t->slots[i];
		if (!e)
			continue;
		pub_slot_put(e->slot);
		e->next_free = gone;
		gone = e;
		d->nr_live--;
	}
	pub_end();
	pthread_mutex_unlock(&pub_lock);
	while (gone) {
		e = gone->next_free;
		free(gone);
		gone = e;
	}
	free(pi->by_addr.slots);
	free(pi->by_index.slots);
	memset(&pi->by_addr, 0, sizeof(pi->by_addr));
	memset(&pi->by_index, 0, sizeof(pi->by_index));
	pi->by_index.by_index = true;
	pi->nr_live = 0;
}
