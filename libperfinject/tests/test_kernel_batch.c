// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * perfinject__batch() through the kernel backend: 2,500 loads, 2,500
 * moves and 2,500 unloads in one call each, which the library splits into
 * prctl calls of at most 1024 entries. Every entry must arrive as one
 * PERF_RECORD_JIT_CODE, in order, with its fields. The backend must have
 * been chosen by default. Then two names longer than the kernel takes
 * (PERF_JIT_CODE_NAME_MAX): they arrive cut to its limit, the second
 * before a UTF-8 sequence that the limit would split. Skips (77) on a
 * kernel without the feature.
 */

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"
#include "../src/uapi_jit_code.h"

#define NR		2500
#define NR_PAGES	512	/* 2 MiB: 7,500 records of about 100 bytes */

struct jit_rec {
	struct perf_event_header header;
	uint32_t pid, tid, op, flags;
	uint64_t addr, len, new_addr, code_index;
	char name[];
};

static struct perfinject_code_op ops[NR];
static char names[NR][16];
static char long_names[2][2048];

int main(void)
{
	static const uint32_t want_op[] = { PERF_JIT_CODE_LOAD,
					    PERF_JIT_CODE_MOVE,
					    PERF_JIT_CODE_UNLOAD };
	const uint64_t base = 0x100000000ULL, moved = 0x200000000ULL;
	long pgsz = sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *mp;
	uint64_t head, tail;
	struct perfinject *pi;
	int fd, i, nr = 0;
	char *data;

	if (prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 0UL, 0UL) < 0)
		SKIP("kernel has no PR_PERF_JIT_CODE (errno %d)", errno);

	fd = t_open_jit_code_event();
	CHECK(fd >= 0, "perf_event_open(jit_code): %s", strerror(errno));
	if (fd < 0)
		return t_done();
	mp = mmap(NULL, (NR_PAGES + 1) * pgsz, PROT_READ | PROT_WRITE,
		  MAP_SHARED, fd, 0);
	CHECK(mp != MAP_FAILED, "mmap: %s", strerror(errno));
	if (mp == MAP_FAILED)
		return t_done();
	data = (char *)mp + pgsz;

	/* Default selection, nothing in the environment: the kernel. */
	unsetenv("PERFINJECT_BACKENDS");
	pi = perfinject__new(NULL);
	CHECK(pi, "new: %s", strerror(errno));
	if (!pi)
		return t_done();
	CHECK_EQ(perfinject__backends(pi), PERFINJECT_BACKEND_KERNEL);

	for (i = 0; i < NR; i++) {
		snprintf(names[i], sizeof(names[i]), "fn%d", i);
		ops[i] = (struct perfinject_code_op){
			.op = PERFINJECT_OP_LOAD, .addr = base + 64 * i,
			.len = 48, .code_index = i + 1, .name = names[i],
		};
	}
	CHECK_EQ(perfinject__batch(pi, ops, NR), NR);
	for (i = 0; i < NR; i++)
		ops[i] = (struct perfinject_code_op){
			.op = PERFINJECT_OP_MOVE, .addr = base + 64 * i,
			.new_addr = moved + 64 * i,
		};
	CHECK_EQ(perfinject__batch(pi, ops, NR), NR);
	for (i = 0; i < NR; i++)
		ops[i] = (struct perfinject_code_op){
			.op = PERFINJECT_OP_UNLOAD, .addr = moved + 64 * i,
		};
	CHECK_EQ(perfinject__batch(pi, ops, NR), NR);
	CHECK_EQ(perfinject__count(pi), 0);

	memset(long_names[0], 'x', sizeof(long_names[0]) - 1);
	/* 'a' to the byte before the limit's last, then a 2-byte sequence. */
	memset(long_names[1], 'b', sizeof(long_names[1]) - 1);
	memset(long_names[1], 'a', PERF_JIT_CODE_NAME_MAX - 2);
	memcpy(long_names[1] + PERF_JIT_CODE_NAME_MAX - 2, "\xc3\xa9", 2);
	for (i = 0; i < 2; i++)
		CHECK_EQ(perfinject__load(pi, long_names[i], base + 64 * i, 48,
					  i + 1), 0);

	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	CHECK(head <= (uint64_t)NR_PAGES * pgsz, "ring wrapped: %llu bytes",
	      (unsigned long long)head);
	for (tail = 0; tail < head && head <= (uint64_t)NR_PAGES * pgsz;) {
		struct jit_rec *r = (void *)(data + tail);
		int k = nr % NR, pass = nr / NR;

		tail += r->header.size;
		CHECK(r->header.type == PERFINJECT_PERF_RECORD_JIT_CODE,
		      "record type %u (lost records?)", r->header.type);
		if (r->header.type != PERFINJECT_PERF_RECORD_JIT_CODE)
			continue;
		nr++;
		if (nr > 3 * NR) {
			size_t want = nr == 3 * NR + 1 ? PERF_JIT_CODE_NAME_MAX - 1 :
						       PERF_JIT_CODE_NAME_MAX - 2;
			const char *name = long_names[nr - 3 * NR - 1];

			CHECK_EQ(strlen(r->name), want);
			CHECK(nr > 3 * NR + 2 || !strncmp(r->name, name, want),
			      "record %d: not the name's first %zu bytes", nr,
			      want);
			continue;
		}
		CHECK_EQ(r->op, want_op[pass]);
		CHECK_EQ(r->pid, (uint32_t)getpid());
		CHECK_EQ(r->flags, 0);
		CHECK_EQ(r->len, 48);
		CHECK_EQ(r->code_index, (uint64_t)k + 1);
		CHECK_EQ(r->addr, (pass == 2 ? moved : base) + 64 * k);
		CHECK_EQ(r->new_addr, pass == 1 ? moved + 64 * k : 0);
		if (pass == 0)
			CHECK(!strcmp(r->name, names[k]), "record %d: name %s",
			      nr, r->name);
	}
	CHECK_EQ(nr, 3 * NR + 2);
	perfinject__free(pi);
	return t_done();
}
