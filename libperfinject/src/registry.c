// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The registry of live code: two indexes (by start address, by code
 * index, index.h) for lookups inside the process, and a published view,
 * chunks of entries with a sequence count each, for readers outside it.
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
	.chunk_slots	 = 1024,	/* PI_CHUNK_SLOTS */
};

/*
 * This copy's own descriptor. The exported name can be interposed: a
 * program or another copy of the library that exports it first would
 * take this copy's references through the GOT, and two copies would
 * write one registry under two locks. A hidden alias binds locally.
 */
extern struct perfinject_registry_descriptor pi_desc
	__attribute__((alias("perfinject_registry_descriptor"),
		       visibility("hidden")));

/*
 * The published view (doc/registry.md): entries in chunks of
 * PI_CHUNK_SLOTS that never move, found through a table of chunk
 * addresses. Every entry has its own sequence count, so a reader checks
 * each entry alone and a writer never makes anyone else's read fail.
 * Growing adds a chunk: nothing is copied, no load waits for a copy of
 * the view. A replaced chunk table is kept (it is small), so an address a
 * reader took from the descriptor stays readable; chunks are kept for the
 * life of the process.
 */
#define PI_CHUNK_SLOTS	1024

/* Serialises writers of the published view, across handles. */
static pthread_mutex_t pub_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *pub_table;	/* chunk addresses */
static uint64_t pub_table_cap;
static uint64_t pub_nr_slots;	/* slots ever handed out */
/*
 * Free slots no handle owns: a stack, not a list linked through the
 * slots, so that taking one reads no slot (a cache miss each, at scale).
 */
static uint64_t *pub_free;
static uint64_t pub_nr_free;
static uint64_t pub_free_cap;

struct pi_old_table {
	struct pi_old_table	*next;
	uint64_t		*table;
};
static struct pi_old_table *pub_old_tables;

PERFINJECT_API const struct perfinject_registry_descriptor *
perfinject_registry__descriptor(void)
{
	return &pi_desc;
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
 * The reader is another process reading with process_vm_readv(), so only
 * the order in which our stores become visible matters: an entry's odd
 * count before its data, its data before the even count (release), and
 * the even count before its old name is freed.
 */
#if defined(__SANITIZE_THREAD__)
/* TSAN rejects fences; a full-barrier RMW orders as much here. */
static uint64_t pub_fence_word;

static inline void pub_store_order(void)
{
	__atomic_fetch_add(&pub_fence_word, 0, __ATOMIC_SEQ_CST);
}
#else
static inline void pub_store_order(void)
{
	/* smp_wmb(): a compiler barrier on x86, dmb ishst on arm64. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
}
#endif

/*
 * Slot @slot, which the caller owns (its handle's, or under pub_lock). A
 * table replaced meanwhile is kept, and holds the chunk of every slot
 * handed out before it was replaced, so the table read need not be the
 * newest.
 */
static struct perfinject_registry_entry *pub_slot(uint64_t slot)
{
	uint64_t *table = __atomic_load_n(&pub_table, __ATOMIC_ACQUIRE);
	struct perfinject_registry_entry *chunk =
		(void *)(uintptr_t)table[slot / PI_CHUNK_SLOTS];

	return &chunk[slot % PI_CHUNK_SLOTS];
}

static void pub_slot_begin(struct perfinject_registry_entry *s)
{
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELAXED);
	pub_store_order();
}

static void pub_slot_end(struct perfinject_registry_entry *s)
{
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
}

/* Add a chunk of free slots. Called with pub_lock held. */
static int pub_add_chunk(void)
{
	struct perfinject_registry_descriptor *d = &pi_desc;
	uint64_t nr = d->nr_chunks, *table = pub_table, cap = pub_table_cap;
	struct perfinject_registry_entry *chunk;
	struct pi_old_table *old = NULL;

	/* Room on the free stack for every slot, the new chunk's too. */
	if (pub_free_cap < (nr + 1) * PI_CHUNK_SLOTS) {
		uint64_t fcap = pub_free_cap ? 2 * pub_free_cap :
					       16 * PI_CHUNK_SLOTS;
		uint64_t *f = realloc(pub_free, fcap * sizeof(*f));

		if (!f)
			return -ENOMEM;
		pub_free = f;
		pub_free_cap = fcap;
	}
	chunk = calloc(PI_CHUNK_SLOTS, sizeof(*chunk));
	if (!chunk)
		return -ENOMEM;
	if (nr == cap) {
		cap = cap ? 2 * cap : 16;
		table = calloc(cap, sizeof(*table));
		old = malloc(sizeof(*old));
		if (!table || !old) {
			free(table);
			free(old);
			free(chunk);
			return -ENOMEM;
		}
		if (nr)
			memcpy(table, pub_table, nr * sizeof(*table));
	}
	table[nr] = (uint64_t)(uintptr_t)chunk;
	__atomic_store_n(&d->seq, d->seq + 1, __ATOMIC_RELAXED);
	pub_store_order();
	if (table != pub_table) {
		if (pub_table) {
			old->table = pub_table;
			old->next = pub_old_tables;
			pub_old_tables = old;
		} else {
			free(old);
		}
		__atomic_store_n(&pub_table, table, __ATOMIC_RELEASE);
		pub_table_cap = cap;
		__atomic_store_n(&d->chunks, (uint64_t)(uintptr_t)table,
				 __ATOMIC_RELAXED);
	}
	pub_store_order();
	__atomic_store_n(&d->nr_chunks, nr + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&d->seq, d->seq + 1, __ATOMIC_RELEASE);
	return 0;
}

/* Hand out a free slot, adding a chunk if none is. With pub_lock. */
static int pub_slot_get(uint64_t *slot)
{
	struct perfinject_registry_descriptor *d = &pi_desc;
	int err;

	if (pub_nr_free) {
		*slot = pub_free[--pub_nr_free];
		return 0;
	}
	if (pub_nr_slots == d->nr_chunks * PI_CHUNK_SLOTS) {
		err = pub_add_chunk();
		if (err)
			return err;
	}
	*slot = pub_nr_slots++;
	return 0;
}

/*
 * Put an empty slot on the free stack. With pub_lock, and room: every
 * slot handed out has its place there (pub_add_chunk() grows it).
 */
static void pub_slot_free(uint64_t slot)
{
	pub_free[pub_nr_free++] = slot;
}

/*
 * Every handle keeps free slots of its own, taken from the free list and
 * given back PI_SLOT_BATCH at a time: a load or an unload writes only
 * slots its handle owns, under the handle's lock, and visits pub_lock
 * once in about PI_SLOT_BATCH calls, not once a call. A handle gives
 * back only once it holds PI_SLOT_BATCH more than it keeps, or a run of
 * unloads would give one back, under pub_lock, per unload.
 */
#define PI_SLOT_BATCH	64
#define PI_SLOT_KEEP	(2 * PI_SLOT_BATCH)

static void pi_slots_give_back(struct perfinject *pi, unsigned int keep)
{
	if (pi->nr_own <= keep + PI_SLOT_BATCH)
		return;
	pthread_mutex_lock(&pub_lock);
	while (pi->nr_own > keep)
		pub_slot_free(pi->own[--pi->nr_own]);
	pthread_mutex_unlock(&pub_lock);
}

/* Own at least @need free slots. */
static int pi_slots_take(struct perfinject *pi, unsigned int need)
{
	unsigned int want;
	int err = 0;

	if (pi->nr_own >= need)
		return 0;
	want = need + PI_SLOT_BATCH;
	if (want > PI_OWN_SLOTS)
		want = PI_OWN_SLOTS;
	pthread_mutex_lock(&pub_lock);
	while (pi->nr_own < want) {
		err = pub_slot_get(&pi->own[pi->nr_own]);
		if (err)
			break;
		pi->nr_own++;
	}
	pthread_mutex_unlock(&pub_lock);
	return pi->nr_own >= need ? 0 : err;
}

static void pub_slot_set(uint64_t slot, const struct pi_entry *e)
{
	struct perfinject_registry_entry *s = pub_slot(slot);

	pub_slot_begin(s);
	s->addr = e->addr;
	s->len = e->len;
	s->code_index = e->code_index;
	s->name_len = e->name_len;
	s->kind = e->kind;
	s->tier = e->tier;
	s->name = (uint64_t)(uintptr_t)e->name;
	s->data_size = e->data_size;
	s->data = (uint64_t)(uintptr_t)e->data;
	pub_slot_end(s);
}

static void pub_slot_move(uint64_t slot, const struct pi_entry *e)
{
	struct perfinject_registry_entry *s = pub_slot(slot);

	pub_slot_begin(s);
	s->addr = e->addr;
	s->name = (uint64_t)(uintptr_t)e->name;
	/* Its unwind information, moved with it. */
	s->data = (uint64_t)(uintptr_t)e->data;
	pub_slot_end(s);
}

/* Empty slot @slot; it stays the handle's, for its next load. */
static void pub_slot_clear(uint64_t slot)
{
	struct perfinject_registry_entry *s = pub_slot(slot);

	pub_slot_begin(s);
	s->name = 0;
	s->len = 0;
	s->code_index = 0;
	s->name_len = 0;
	s->kind = 0;
	s->tier = 0;
	s->addr = 0;
	s->data_size = 0;
	s->data = 0;
	pub_slot_end(s);
}

int pi_registry_init(struct perfinject *pi)
{
	pi_addr_init(&pi->by_addr);
	pi_index_init(&pi->by_index, true);
	return 0;
}

struct pi_entry *pi_lookup_addr(struct perfinject *pi, uint64_t addr)
{
	return pi_addr_lookup(&pi->by_addr, addr);
}

struct pi_entry *pi_lookup_index(struct perfinject *pi, uint64_t code_index)
{
	return pi_index_lookup(&pi->by_index, code_index);
}

/* Make sure pi_registry_commit() of @loads more loads cannot fail. */
int pi_registry_reserve(struct perfinject *pi, size_t loads)
{
	int err;

	err = pi_addr_reserve(&pi->by_addr, loads);
	if (!err)
		err = pi_index_reserve(&pi->by_index, loads);
	if (!err && pi->publish)
		err = pi_slots_take(pi, loads);
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
	e->data_size = 0;
	e->data = NULL;
	e->name_len = name_len;
	memcpy(e->name, name, name_len);
	e->name[name_len] = '\0';
	return e;
}

void pi_entry_free(struct pi_entry *e)
{
	if (e)
		pi_data_put(e->data);
	free(e);
}

/*
 * @e has left the indexes for good. Without PI_ADDR_LOCKLESS_READS its
 * readers hold pi->lock, as the caller does: free it now. Otherwise a
 * perfinject__find() may still be reading it: keep it until a grace
 * period has passed (pi_registry_take_retired()).
 */
static void pi_entry_retire(struct perfinject *pi, struct pi_entry *e)
{
	if (!PI_ADDR_LOCKLESS_READS) {
		pi_entry_free(e);
		return;
	}
	e->next_free = pi->retired;
	pi->retired = e;
	pi->nr_retired++;
}

/*
 * Free @list, entries that pi_registry_take_retired() took, after a
 * grace period. Outside any read-side critical section; best without
 * pi->lock, so that the handle's other writers go on meanwhile (a
 * reader never waits for pi->lock, so nothing waits in a circle either
 * way).
 */
void pi_registry_free_retired(struct pi_entry *list)
{
	struct pi_entry *e;

	if (!list)
		return;
	pi_addr_wait_readers();
	while (list) {
		e = list->next_free;
		pi_entry_free(list);
		list = e;
	}
}

static void pi_entry_insert(struct perfinject *pi, struct pi_entry *e)
{
	pi_addr_insert(&pi->by_addr, e);
	if (e->code_index)
		pi_index_insert(&pi->by_index, e);
}

static void pi_entry_remove(struct perfinject *pi, struct pi_entry *e)
{
	pi_addr_delete(&pi->by_addr, e);
	if (e->code_index)
		pi_index_delete(&pi->by_index, e);
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
	struct perfinject_registry_descriptor *d = &pi_desc;
	struct pi_entry *old, *e, *gone = NULL;
	int64_t live = 0;
	unsigned int i;

	pi_addr_walk_begin();
	for (i = 0; i < nr; i++) {
		const struct perf_jit_code_entry *k = &chg[i].kentry;

		switch (k->op) {
		case PERF_JIT_CODE_LOAD:
			e = chg[i].add;
			if (pi->publish) {
				e->slot = pi->own[--pi->nr_own];
				pub_slot_set(e->slot, e);
			}
			pi_entry_insert(pi, e);
			live++;
			break;
		case PERF_JIT_CODE_UNLOAD:
			old = pi_lookup_addr(pi, k->addr);
			pi_entry_remove(pi, old);
			if (pi->publish) {
				pub_slot_clear(old->slot);
				/* Room: PI_OWN_SLOTS holds a chunk's unloads too. */
				pi->own[pi->nr_own++] = old->slot;
			}
			old->next_free = gone;
			gone = old;
			live--;
			break;
		case PERF_JIT_CODE_MOVE:
			old = pi_lookup_addr(pi, k->addr);
			e = chg[i].add;
			e->dump_index = old->dump_index;
			/* A moved entry keeps its slot: one store moves it. */
			e->slot = old->slot;
			if (pi->publish)
				pub_slot_move(e->slot, e);
			pi_entry_remove(pi, old);
			pi_entry_insert(pi, e);
			old->next_free = gone;
			gone = old;
			break;
		}
	}
	pi_addr_walk_end();
	if (pi->publish) {
		if (live)
			__atomic_fetch_add(&d->nr_live, (uint64_t)live,
					   __ATOMIC_RELAXED);
		__atomic_fetch_add(&d->changes, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&pi->nr_live, pi_addr_count(&pi->by_addr),
			 __ATOMIC_RELAXED);
	pi->gone = gone;
}

/*
 * Undo the last @nr changes of the commit just made, @chg in their
 * order, newest first: the kernel did not take them. Exact, because a
 * commit gives no slot back: each LOAD took the top of pi->own and each
 * UNLOAD pushed its slot there, and each UNLOAD and MOVE pushed the
 * entry it retired onto pi->gone.
 */
void pi_registry_undo(struct perfinject *pi, struct pi_change *chg,
		      unsigned int nr)
{
	struct perfinject_registry_descriptor *d = &pi_desc;
	struct pi_entry *e, *old;
	int64_t live = 0;

	if (!nr)
		return;
	/*
	 * An entry this commit unlinked goes back in below, and cds_lfht
	 * reuses its link: no reader may still be walking through it.
	 */
	if (PI_ADDR_LOCKLESS_READS)
		pi_addr_wait_readers();
	pi_addr_walk_begin();
	while (nr--) {
		struct pi_change *c = &chg[nr];

		switch (c->kentry.op) {
		case PERF_JIT_CODE_LOAD:
			e = c->add;
			pi_entry_remove(pi, e);
			if (pi->publish) {
				pub_slot_clear(e->slot);
				pi->own[pi->nr_own++] = e->slot;
			}
			pi_entry_retire(pi, e);
			c->add = NULL;
			live--;
			break;
		case PERF_JIT_CODE_UNLOAD:
			old = pi->gone;
			pi->gone = old->next_free;
			old->next_free = NULL;
			if (pi->publish) {
				old->slot = pi->own[--pi->nr_own];
				pub_slot_set(old->slot, old);
			}
			pi_entry_insert(pi, old);
			live++;
			break;
		case PERF_JIT_CODE_MOVE:
			old = pi->gone;
			pi->gone = old->next_free;
			old->next_free = NULL;
			e = c->add;
			pi_entry_remove(pi, e);
			pi_entry_insert(pi, old);
			if (pi->publish)
				pub_slot_move(old->slot, old);
			pi_entry_retire(pi, e);
			c->add = NULL;
			break;
		}
	}
	pi_addr_walk_end();
	if (pi->publish) {
		if (live)
			__atomic_fetch_add(&d->nr_live, (uint64_t)live,
					   __ATOMIC_RELAXED);
		__atomic_fetch_add(&d->changes, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&pi->nr_live, pi_addr_count(&pi->by_addr),
			 __ATOMIC_RELAXED);
}

/*
 * Free what the last commit retired, once the files have their names
 * (with PI_ADDR_LOCKLESS_READS: retire it, for pi_registry_take_retired()),
 * and give back the free slots the handle need not keep.
 */
void pi_registry_reap(struct perfinject *pi)
{
	struct pi_entry *e;

	while (pi->gone) {
		e = pi->gone->next_free;
		pi_entry_retire(pi, pi->gone);
		pi->gone = e;
	}
	pi_slots_give_back(pi, PI_SLOT_KEEP);
}

/*
 * Call @fn for every live entry, in table order; pi->lock held. @fn may
 * not change the registry, nor wait for a grace period.
 */
void pi_registry_for_each(struct perfinject *pi,
			  void (*fn)(struct pi_entry *e, void *ctx), void *ctx)
{
	pi_addr_walk_begin();
	pi_addr_for_each(&pi->by_addr, fn, ctx);
	pi_addr_walk_end();
}

struct pi_fini_ctx {
	struct perfinject	*pi;
	struct pi_entry		*gone;
};

/* Empty @e's slot and put @e on the list to free. With pub_lock. */
static void pi_fini_entry(struct pi_entry *e, void *ctx)
{
	struct pi_fini_ctx *f = ctx;

	if (f->pi->publish) {
		pub_slot_clear(e->slot);
		pub_slot_free(e->slot);
	}
	e->next_free = f->gone;
	f->gone = e;
}

/* Remove everything; pi->lock held, no other user of @pi. */
void pi_registry_fini(struct perfinject *pi)
{
	struct perfinject_registry_descriptor *d = &pi_desc;
	struct pi_fini_ctx f = { .pi = pi };
	size_t nr = pi_addr_count(&pi->by_addr);
	struct pi_entry *e;

	pthread_mutex_lock(&pub_lock);
	pi_addr_walk_begin();
	pi_addr_for_each(&pi->by_addr, pi_fini_entry, &f);
	pi_addr_walk_end();
	while (pi->nr_own)
		pub_slot_free(pi->own[--pi->nr_own]);
	pthread_mutex_unlock(&pub_lock);
	if (pi->publish) {
		__atomic_fetch_sub(&d->nr_live, (uint64_t)nr,
				   __ATOMIC_RELAXED);
		__atomic_fetch_add(&d->changes, 1, __ATOMIC_RELEASE);
	}
	pi_addr_fini(&pi->by_addr);
	pi_index_fini(&pi->by_index);
	while (f.gone) {
		e = f.gone->next_free;
		pi_entry_retire(pi, f.gone);
		f.gone = e;
	}
	pi_registry_free_retired(pi->retired);
	pi->retired = NULL;
	pi->nr_retired = 0;
	pi->nr_live = 0;
}
