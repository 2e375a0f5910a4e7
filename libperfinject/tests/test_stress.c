// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * 32 threads, 1,000,000 load/unload/move operations in total on one
 * handle, with lock-free lookups of each other's code in between, the
 * same count under ThreadSanitizer and AddressSanitizer.
 */
#include <inttypes.h>
#include <pthread.h>
#include <unistd.h>

#include "helpers.h"

#define NR_THREADS	32
#define NR_SLOTS	64
#define TOTAL_OPS	1000000

struct slot {
	int		live;
	int		side;	/* 0: at addr[0], 1: at addr[1] */
	uint64_t	code_index;
};

struct worker {
	pthread_t	thread;
	int		id;
	struct slot	slots[NR_SLOTS];
	unsigned long	lookups_ok;
	int		failures;
};

static struct perfinject *pi;
static struct worker workers[NR_THREADS];

/* Each (thread, slot) owns two addresses; nobody else uses them. */
static uint64_t slot_addr(int t, int s, int side)
{
	return 0x10000000ULL + ((uint64_t)t << 20) + ((uint64_t)s << 8) +
	       ((uint64_t)side << 7);
}

static uint64_t index_len(uint64_t code_index)
{
	return 1 + code_index % 97;
}

#define WFAIL(w, ...)							\
	do {								\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		(w)->failures++;					\
	} while (0)

/* An entry seen by a lookup must be one whole load, never a mix. */
static void check_entry(struct worker *w, uint64_t addr,
			const struct perfinject_code *c)
{
	unsigned int t, s;
	uint64_t idx;
	int side;

	if (sscanf(c->name, "t%u_s%u_i%" SCNx64 "_%d", &t, &s, &idx,
		   &side) != 4) {
		WFAIL(w, "bad name %s", c->name);
		return;
	}
	/* A moved entry keeps its name, so side in the name is the load's. */
	if (c->addr != addr || t >= NR_THREADS || s >= NR_SLOTS ||
	    (addr != slot_addr(t, s, 0) && addr != slot_addr(t, s, 1)) ||
	    c->code_index != idx || c->len != index_len(idx))
		WFAIL(w, "inconsistent entry at %#" PRIx64 ": %s len %" PRIu64
		      " idx %" PRIx64, addr, c->name, c->len, c->code_index);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	unsigned int seed = w->id * 7919 + 1;
	uint64_t gen = 0;
	char name[64];
	int i, ret;

	for (i = 0; i < TOTAL_OPS / NR_THREADS; i++) {
		int s = rand_r(&seed) % NR_SLOTS;
		struct slot *sl = &w->slots[s];
		uint64_t at = slot_addr(w->id, s, sl->side);
		int what = rand_r(&seed) % 8;

		if (what == 7) {
			/* Look up someone else's slot, lock-free. */
			struct perfinject_code c;
			int t = rand_r(&seed) % NR_THREADS;
			int os = rand_r(&seed) % NR_SLOTS;
			uint64_t addr = slot_addr(t, os, rand_r(&seed) & 1);

			ret = perfinject__find(pi, addr, &c, name,
					       sizeof(name));
			if (!ret) {
				check_entry(w, addr, &c);
				w->lookups_ok++;
			} else if (ret != -ENOENT) {
				WFAIL(w, "find: %d", ret);
			}
			i--; /* not a registry change */
			continue;
		}
		if (!sl->live) {
			sl->code_index = ((uint64_t)w->id << 40) | ++gen;
			snprintf(name, sizeof(name), "t%d_s%d_i%" PRIx64 "_%d",
				 w->id, s, sl->code_index, sl->side);
			ret = perfinject__load(pi, name, at,
					       index_len(sl->code_index),
					       sl->code_index);
			if (ret)
				WFAIL(w, "load %#" PRIx64 ": %d", at, ret);
			sl->live = 1;
		} else if (what < 2) {
			ret = perfinject__unload(pi, at);
			if (ret)
				WFAIL(w, "unload %#" PRIx64 ": %d", at, ret);
			sl->live = 0;
		} else if (what < 4) {
			ret = perfinject__unload_index(pi, sl->code_index);
			if (ret)
				WFAIL(w, "unload_index: %d", ret);
			sl->live = 0;
		} else if (what < 6) {
			uint64_t to = slot_addr(w->id, s, !sl->side);

			ret = perfinject__move(pi, at, to);
			if (ret)
				WFAIL(w, "move: %d", ret);
			sl->side = !sl->side;
		} else {
			/* At most one live entry per start address. */
			ret = perfinject__load(pi, "dup", at, 1, 0);
			if (ret != -EEXIST)
				WFAIL(w, "duplicate load: %d", ret);
			ret = perfinject__unload(pi, slot_addr(w->id, s,
							       !sl->side));
			if (ret != -ENOENT)
				WFAIL(w, "unload of other side: %d", ret);
		}
	}
	return NULL;
}

static int count_cb(const struct perfinject_code *c, void *ctx)
{
	(void)c;
	(*(size_t *)ctx)++;
	return 0;
}

int main(void)
{
	size_t live = 0, seen = 0;
	unsigned long lookups = 0;
	int t, s, ret;

	PERFINJECT_OPTS(opts, .flags = PERFINJECT_F_NO_ENV);
	pi = perfinject__new(&opts);
	if (!pi)
		return T_FAIL;
	for (t = 0; t < NR_THREADS; t++) {
		workers[t].id = t;
		if (pthread_create(&workers[t].thread, NULL, work,
				   &workers[t]))
			return T_FAIL;
	}
	for (t = 0; t < NR_THREADS; t++) {
		pthread_join(workers[t].thread, NULL);
		t_failures += workers[t].failures;
		lookups += workers[t].lookups_ok;
	}

	/* Final state: exactly what the threads believe is live. */
	for (t = 0; t < NR_THREADS; t++) {
		for (s = 0; s < NR_SLOTS; s++) {
			struct slot *sl = &workers[t].slots[s];
			struct perfinject_code c;
			char name[64];

			ret = perfinject__find(pi, slot_addr(t, s, sl->side),
					       &c, name, sizeof(name));
			if (sl->live) {
				live++;
				CHECK(!ret && c.code_index == sl->code_index,
				      "lost entry t%d s%d", t, s);
			} else {
				CHECK_EQ(ret, -ENOENT);
			}
			CHECK_EQ(perfinject__find(pi, slot_addr(t, s,
								!sl->side),
						  &c, NULL, 0), -ENOENT);
		}
	}
	CHECK_EQ(perfinject__count(pi), live);
	CHECK_EQ(perfinject_registry__read_pid(getpid(), 0, count_cb, &seen),
		 live);
	CHECK_EQ(seen, live);
	CHECK_EQ(perfinject__rundown(pi), live);
	fprintf(stderr, "%d ops, %lu successful lookups, %zu live\n",
		TOTAL_OPS, lookups, live);
	perfinject__free(pi);
	return t_done();
}
