// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * perfinject__find() and perfinject__find_info() on several threads while
 * others load, move and unload, one call at a time and in batches, on
 * the same handle. Every find either misses or returns one whole entry:
 * the one a writer loaded, at an address that entry has (its name says
 * which, and its length and code index follow from its name), never a
 * mix of two, never one freed meanwhile.
 *
 * With URCU=1 the finds take no lock, and an entry a writer removes is
 * freed only after a grace period: without that wait, a find copies an
 * entry that malloc() has handed to a new load, and this test fails
 * (AddressSanitizer reports the read after free first).
 */
#include <inttypes.h>
#include <pthread.h>

#include "helpers.h"

#define NR_WRITERS	2
#define NR_READERS	16
#define NR_SLOTS	512	/* per writer */
#define WRITER_OPS	150000
#define MAX_BATCH	8

struct slot {
	bool		live;
	int		side;	/* 0: at its first address, 1: its second */
	uint32_t	gen;	/* of the live entry */
};

struct writer {
	pthread_t	thread;
	unsigned int	id;
	struct slot	slots[NR_SLOTS];
	int		failures;
};

struct reader {
	pthread_t	thread;
	unsigned int	id;
	unsigned long	hits;
	unsigned long	misses;
	int		failures;
};

static struct perfinject *pi;
static struct writer writers[NR_WRITERS];
static struct reader readers[NR_READERS];
static pthread_barrier_t start;
static int writers_done;

#define TFAIL(t, ...)							\
	do {								\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		(t)->failures++;					\
	} while (0)

/* Each (writer, slot) owns two addresses; a move goes between them. */
static uint64_t slot_addr(unsigned int w, unsigned int s, int side)
{
	return 0x20000000ULL + ((uint64_t)w << 24) + ((uint64_t)s << 8) +
	       ((uint64_t)side << 7);
}

static uint64_t gen_len(uint32_t gen)
{
	return 1 + gen % 97;
}

/* Unique among live entries, as code indices must be. */
static uint64_t gen_index(unsigned int w, unsigned int s, uint32_t gen)
{
	return ((uint64_t)(w + 1) << 56) | ((uint64_t)s << 32) | gen;
}

static void gen_name(char *buf, size_t sz, unsigned int w, unsigned int s,
		     uint32_t gen)
{
	snprintf(buf, sz, "w%u_s%u_g%" PRIx32, w, s, gen);
}

/*
 * What a find at @addr returned: @name, @c_addr, @len, @index. One whole
 * load of the slot @addr belongs to, and @addr is where it is.
 */
static void check_found(struct reader *r, uint64_t addr, const char *name,
			uint64_t c_addr, uint64_t len, uint64_t index)
{
	unsigned int w, s;
	uint32_t gen;
	int end = 0;

	if (sscanf(name, "w%u_s%u_g%" SCNx32 "%n", &w, &s, &gen, &end) != 3 ||
	    name[end]) {
		TFAIL(r, "find %#" PRIx64 ": bad name \"%s\"", addr, name);
		return;
	}
	/* A moved entry keeps its name: either address of the slot. */
	if (w >= NR_WRITERS || s >= NR_SLOTS ||
	    (addr != slot_addr(w, s, 0) && addr != slot_addr(w, s, 1)) ||
	    c_addr != addr || len != gen_len(gen) ||
	    index != gen_index(w, s, gen))
		TFAIL(r, "find %#" PRIx64 ": inconsistent entry \"%s\" at %#"
		      PRIx64 " len %" PRIu64 " index %#" PRIx64, addr, name,
		      c_addr, len, index);
}

static void *read_work(void *arg)
{
	struct reader *r = arg;
	unsigned int seed = 7919 * (r->id + 1);
	struct perfinject_code_info info;
	struct perfinject_code c;
	char name[64];
	uint64_t addr;
	int ret;

	pthread_barrier_wait(&start);
	while (!__atomic_load_n(&writers_done, __ATOMIC_ACQUIRE)) {
		addr = slot_addr(rand_r(&seed) % NR_WRITERS,
				 rand_r(&seed) % NR_SLOTS, rand_r(&seed) & 1);
		if (rand_r(&seed) & 1) {
			ret = perfinject__find(pi, addr, &c, name,
					       sizeof(name));
			if (!ret)
				check_found(r, addr, name, c.addr, c.len,
					    c.code_index);
		} else {
			memset(&info, 0, sizeof(info));
			info.sz = sizeof(info);
			ret = perfinject__find_info(pi, addr, &info, name,
						    sizeof(name));
			if (!ret) {
				check_found(r, addr, name, info.addr,
					    info.len, info.code_index);
				if (info.name_len != strlen(name))
					TFAIL(r, "find_info: name_len %u for \"%s\"",
					      info.name_len, name);
			}
		}
		if (!ret)
			r->hits++;
		else if (ret == -ENOENT)
			r->misses++;
		else
			TFAIL(r, "find %#" PRIx64 ": %d", addr, ret);
		if (perfinject__count(pi) > NR_WRITERS * NR_SLOTS)
			TFAIL(r, "count %zu", perfinject__count(pi));
	}
	return NULL;
}

/*
 * The operation that changes slot @s of @w: a load if it is empty, else
 * an unload or a move. Fills @op and @name (which must outlive the
 * call) and what the slot will be.
 */
static void next_op(struct writer *w, unsigned int s, unsigned int *seed,
		    struct perfinject_code_op *op, char *name, size_t sz,
		    struct slot *after)
{
	struct slot *sl = &w->slots[s];
	uint64_t at = slot_addr(w->id, s, sl->side);

	*after = *sl;
	memset(op, 0, sizeof(*op));
	if (!sl->live) {
		after->live = true;
		after->gen = sl->gen + 1;
		gen_name(name, sz, w->id, s, after->gen);
		op->op = PERFINJECT_OP_LOAD;
		op->addr = at;
		op->len = gen_len(after->gen);
		op->code_index = gen_index(w->id, s, after->gen);
		op->name = name;
	} else if (rand_r(seed) & 1) {
		after->live = false;
		op->op = PERFINJECT_OP_UNLOAD;
		op->addr = at;
	} else {
		after->side = !sl->side;
		op->op = PERFINJECT_OP_MOVE;
		op->addr = at;
		op->new_addr = slot_addr(w->id, s, after->side);
	}
}

static void *write_work(void *arg)
{
	struct writer *w = arg;
	unsigned int seed = 104729 * (w->id + 1), s[MAX_BATCH];
	struct perfinject_code_op ops[MAX_BATCH];
	struct slot after[MAX_BATCH];
	char names[MAX_BATCH][64];
	int i, j, n, ret;

	pthread_barrier_wait(&start);
	for (i = 0; i < WRITER_OPS; i += n) {
		/* One call in four is a batch, of distinct slots. */
		n = rand_r(&seed) % 4 ? 1 : 2 + rand_r(&seed) % (MAX_BATCH - 1);
		for (j = 0; j < n; j++) {
			s[j] = (rand_r(&seed) % (NR_SLOTS / MAX_BATCH)) *
			       MAX_BATCH + j;
			next_op(w, s[j], &seed, &ops[j], names[j],
				sizeof(names[j]), &after[j]);
		}
		if (n == 1) {
			switch (ops[0].op) {
			case PERFINJECT_OP_LOAD:
				ret = perfinject__load(pi, ops[0].name,
						       ops[0].addr, ops[0].len,
						       ops[0].code_index);
				break;
			case PERFINJECT_OP_UNLOAD:
				ret = perfinject__unload(pi, ops[0].addr);
				break;
			default:
				ret = perfinject__move(pi, ops[0].addr,
						       ops[0].new_addr);
				break;
			}
			ret = ret ? ret : 1;
		} else {
			ret = perfinject__batch(pi, ops, n);
		}
		if (ret != n) {
			TFAIL(w, "writer %u: %d of %d operations: %d", w->id,
			      ret, n, ret < 0 ? ret : 0);
			return NULL;
		}
		for (j = 0; j < n; j++)
			w->slots[s[j]] = after[j];
	}
	return NULL;
}

int main(void)
{
	unsigned long hits = 0, misses = 0;
	struct perfinject_code c;
	unsigned int w, s;
	size_t live = 0;
	int i, ret;

	PERFINJECT_OPTS(opts, .flags = PERFINJECT_F_REGISTRY_ONLY);
	pi = perfinject__new(&opts);
	if (!pi)
		return T_FAIL;
	if (pthread_barrier_init(&start, NULL, NR_WRITERS + NR_READERS))
		return T_FAIL;
	for (i = 0; i < NR_READERS; i++) {
		readers[i].id = i;
		if (pthread_create(&readers[i].thread, NULL, read_work,
				   &readers[i]))
			return T_FAIL;
	}
	for (i = 0; i < NR_WRITERS; i++) {
		writers[i].id = i;
		if (pthread_create(&writers[i].thread, NULL, write_work,
				   &writers[i]))
			return T_FAIL;
	}
	for (i = 0; i < NR_WRITERS; i++) {
		pthread_join(writers[i].thread, NULL);
		t_failures += writers[i].failures;
	}
	__atomic_store_n(&writers_done, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NR_READERS; i++) {
		pthread_join(readers[i].thread, NULL);
		t_failures += readers[i].failures;
		hits += readers[i].hits;
		misses += readers[i].misses;
	}
	pthread_barrier_destroy(&start);
	/* The finds saw entries come and go, or they checked nothing. */
	CHECK(hits > 0 && misses > 0, "%lu hits, %lu misses", hits, misses);

	/* In the end, exactly what the writers believe is live. */
	for (w = 0; w < NR_WRITERS; w++) {
		for (s = 0; s < NR_SLOTS; s++) {
			struct slot *sl = &writers[w].slots[s];
			char name[64], want[64];

			ret = perfinject__find(pi, slot_addr(w, s, sl->side),
					       &c, name, sizeof(name));
			if (sl->live) {
				live++;
				gen_name(want, sizeof(want), w, s, sl->gen);
				CHECK(!ret && !strcmp(name, want),
				      "w%u s%u: %d \"%s\"", w, s, ret,
				      ret ? "" : name);
			} else {
				CHECK_EQ(ret, -ENOENT);
			}
			CHECK_EQ(perfinject__find(pi, slot_addr(w, s,
								!sl->side),
						  &c, NULL, 0), -ENOENT);
		}
	}
	CHECK_EQ(perfinject__count(pi), live);
	fprintf(stderr, "%d writes, %lu hits, %lu misses, %zu live\n",
		NR_WRITERS * WRITER_OPS, hits, misses, live);
	perfinject__free(pi);
	return t_done();
}
