// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel backend end to end: a per-task dummy event with
 * attr.jit_code set receives the records the library sends with
 * PR_PERF_JIT_CODE; a batch the kernel refuses partway is delivered up
 * to the refused entry, once, and undone from there in the registry too;
 * and perfinject__free() unloads what is still live (in calls of up to
 * 1024 entries). Skips (77) on a kernel without the feature.
 */
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"
#include "../src/uapi_jit_code.h"

#define NR_PAGES 256
#define NR_MORE 1500

struct jit_rec {
	struct perf_event_header header;
	uint32_t pid, tid, op, flags;
	uint64_t addr, len, new_addr, code_index;
	char name[];
};

struct reg_seen {
	uint64_t	x, y;
	int		nr, x_ok, y_ok;
};

static int reg_entry(const struct perfinject_code *c, void *ctx)
{
	struct reg_seen *s = ctx;

	s->nr++;
	s->x_ok += c->addr == s->x && !strcmp(c->name, "ok1");
	s->y_ok += c->addr == s->y && !strcmp(c->name, "stay");
	return 0;
}

/*
 * kfn2 at @a live: a batch whose third entry the kernel refuses. Its
 * first two are delivered once each; the unload and the move after the
 * refused load are undone, so the registry and the tables keep their
 * code where it was. Restores kfn2 at @a and leaves the buffer read.
 */
static void refused_batch(struct perfinject *pi,
			  struct perf_event_mmap_page *mp, char *data,
			  size_t data_sz, uint64_t a)
{
	static unsigned char c3[3][16];
	uint64_t x = (uintptr_t)c3[0], y = (uintptr_t)c3[1];
	uint64_t z = (uintptr_t)c3[2], head, tail;
	struct perfinject_code_op ops[] = {
		{ .op = PERFINJECT_OP_UNLOAD, .addr = a },
		{ .op = PERFINJECT_OP_LOAD, .addr = x, .len = 16,
		  .name = "ok1" },
		{ .op = PERFINJECT_OP_LOAD, .addr = 1ULL << 62, .len = 16,
		  .name = "high" },
		{ .op = PERFINJECT_OP_UNLOAD, .addr = x },
		{ .op = PERFINJECT_OP_MOVE, .addr = y, .new_addr = z },
		{ .op = PERFINJECT_OP_LOAD, .addr = a, .len = 8,
		  .name = "never" },
	};
	struct reg_seen seen = { .x = x, .y = y };
	struct perfinject_code code;
	uint64_t want_addr[] = { y, a, x };
	uint32_t want_op[] = { PERF_JIT_CODE_LOAD, PERF_JIT_CODE_UNLOAD,
			       PERF_JIT_CODE_LOAD };
	int nr = 0;

	CHECK_EQ(perfinject__load(pi, "stay", y, 16, 0), 0);
	CHECK_EQ(perfinject__batch(pi, ops, 6), 2);
	CHECK_EQ(perfinject__count(pi), 2);
	CHECK_EQ(perfinject__find(pi, x, &code, NULL, 0), 0);
	CHECK_EQ(perfinject__find(pi, y, &code, NULL, 0), 0);
	CHECK(perfinject__find(pi, z, &code, NULL, 0) < 0, "moved to z");
	CHECK(perfinject__find(pi, a, &code, NULL, 0) < 0, "a still live");
	CHECK_EQ(perfinject_registry__read_pid(getpid(), 0, reg_entry, &seen),
		 2);
	CHECK(seen.x_ok == 1 && seen.y_ok == 1,
	      "registry: ok1 %d, stay %d, of %d", seen.x_ok, seen.y_ok,
	      seen.nr);

	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	for (tail = mp->data_tail; tail < head;) {
		struct perf_event_header *h = (void *)(data + tail % data_sz);
		struct jit_rec *r = (void *)h;

		if (h->type == PERFINJECT_PERF_RECORD_JIT_CODE) {
			CHECK(nr < 3, "record %d: op %u at %#llx", nr, r->op,
			      (unsigned long long)r->addr);
			if (nr < 3) {
				CHECK_EQ(r->op, want_op[nr]);
				CHECK_EQ(r->addr, want_addr[nr]);
			}
			nr++;
		}
		tail += h->size;
	}
	CHECK_EQ(nr, 3);

	CHECK_EQ(perfinject__unload(pi, x), 0);
	CHECK_EQ(perfinject__unload(pi, y), 0);
	CHECK_EQ(perfinject__load(pi, "kfn2", a, 16, 6), 0);
	mp->data_tail = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
}

int main(void)
{
	static unsigned char code[2][32], more[NR_MORE][16];
	static char seen[NR_MORE];
	int i, unloaded_a = 0;
	struct perf_event_mmap_page *mp;
	uint64_t head, tail, expect_op[] = { 1, 3, 2, 1 };
	uint64_t a = (uintptr_t)code[0], b = (uintptr_t)code[1];
	struct perfinject *pi;
	long pgsz = sysconf(_SC_PAGESIZE);
	int fd, nr = 0, probe;
	char *data;

	probe = prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 0UL, 0UL);
	if (probe < 0)
		SKIP("kernel has no PR_PERF_JIT_CODE (errno %d)", errno);
	fd = t_open_jit_code_event();
	if (fd < 0) {
		if (errno == EACCES || errno == EPERM)
			SKIP("perf_event_open: no permission");
		fprintf(stderr, "perf_event_open(jit_code): %s\n",
			strerror(errno));
		return T_FAIL;
	}
	mp = mmap(NULL, (NR_PAGES + 1) * pgsz, PROT_READ | PROT_WRITE,
		  MAP_SHARED, fd, 0);
	if (mp == MAP_FAILED)
		return T_FAIL;
	data = (char *)mp + pgsz;

	PERFINJECT_OPTS(opts, .backends = PERFINJECT_BACKEND_KERNEL,
			.flags = PERFINJECT_F_STRICT);
	pi = perfinject__new(&opts);
	CHECK(pi, "new: %s", strerror(errno));
	if (!pi)
		return t_done();
	CHECK_EQ(perfinject__load(pi, "kfn", a, 32, 5), 0);
	CHECK_EQ(perfinject__move(pi, a, b), 0);
	CHECK_EQ(perfinject__unload(pi, b), 0);
	/* The kernel refuses what the library cannot see: nothing changes. */
	CHECK_EQ(perfinject__load(pi, "high", 1ULL << 62, 16, 0), -EINVAL);
	CHECK_EQ(perfinject__count(pi), 0);
	CHECK_EQ(perfinject__load(pi, "kfn2", a, 16, 6), 0);

	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	for (tail = mp->data_tail; tail < head;) {
		struct perf_event_header *h =
			(void *)(data + tail % (NR_PAGES * pgsz));
		struct jit_rec *r = (void *)h;

		if (h->type == PERFINJECT_PERF_RECORD_JIT_CODE) {
			CHECK(nr < 4, "too many records");
			if (nr >= 4)
				break;
			CHECK_EQ(r->op, expect_op[nr]);
			CHECK_EQ(r->pid, getpid());
			CHECK_EQ(r->tid, syscall(SYS_gettid));
			CHECK_EQ(r->flags, 0);
			CHECK_EQ(r->addr, nr == 3 ? a : nr ? (nr == 1 ? a : b) : a);
			CHECK_EQ(r->len, nr == 3 ? 16 : 32);
			CHECK_EQ(r->new_addr, nr == 1 ? b : 0);
			CHECK_EQ(r->code_index, nr == 3 ? 6 : 5);
			if (r->op == 1)
				CHECK(!strcmp(r->name, nr ? "kfn2" : "kfn"),
				      "name %s", r->name);
			nr++;
		}
		tail += h->size;
	}
	CHECK_EQ(nr, 4);
	mp->data_tail = tail;

	refused_batch(pi, mp, data, NR_PAGES * pgsz, a);
	tail = mp->data_tail;

	/* free() unloads everything live: more than one kernel call. */
	for (i = 0; i < NR_MORE; i++) {
		char name[16];

		snprintf(name, sizeof(name), "more%d", i);
		CHECK_EQ(perfinject__load(pi, name, (uintptr_t)more[i], 16, 0),
			 0);
	}
	perfinject__free(pi);
	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	for (nr = 0; tail < head;) {
		struct perf_event_header *h =
			(void *)(data + tail % (NR_PAGES * pgsz));
		struct jit_rec *r = (void *)h;

		CHECK(h->type != PERF_RECORD_LOST, "records lost");
		if (h->type == PERFINJECT_PERF_RECORD_JIT_CODE && r->op == 2) {
			if (r->addr == a) {
				CHECK(!unloaded_a, "kfn2 unloaded twice");
				unloaded_a = 1;
			} else if (r->addr >= (uintptr_t)more[0] &&
				   r->addr <= (uintptr_t)more[NR_MORE - 1]) {
				i = (r->addr - (uintptr_t)more[0]) / 16;
				CHECK(!seen[i]++, "more%d unloaded twice", i);
				nr++;
			} else {
				CHECK(0, "unload of %#llx",
				      (unsigned long long)r->addr);
			}
		}
		tail += h->size;
	}
	CHECK(unloaded_a, "free did not unload kfn2");
	CHECK_EQ(nr, NR_MORE);
	return t_done();
}
