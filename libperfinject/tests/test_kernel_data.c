// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel backend's data: a load with a line table (inlined frames
 * included) and unwind information reaches an event with
 * attr.jit_code_data as PERF_RECORD_JIT_CODE_DATA, in the kernel's
 * formats, after its load and in order with the batch around it; the
 * kernel adds the code's bytes for attr.jit_code_bytes. A line table
 * over the kernel's limit is dropped and the load stands. A rundown
 * sends the line table and unwind information again where the registry
 * keeps them (PERFINJECT_F_REGISTRY_DATA), else the load. Skips (77) on
 * a kernel without PERF_JIT_CODE_DATA.
 */
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "helpers.h"
#include "../src/uapi_jit_code.h"

#define NR_PAGES 512

struct jit_rec {
	struct perf_event_header header;
	uint32_t pid, tid, op, flags;
	uint64_t addr, len, new_addr, code_index;
	char name[];
};

struct data_rec {
	struct perf_event_header header;
	uint32_t pid, tid, type, flags;
	uint64_t addr, code_index;
	uint32_t offset, size, total, reserved;
	unsigned char data[];
};

static unsigned char code[200], big[65536];
static const unsigned char eh_frame[24] = "eh_frame bytes, 24 long";
static const unsigned char eh_hdr[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

/* What the ring holds: records copied out, in order. */
struct seen {
	struct perf_event_header *rec[64];
	int nr;
};

static void drain(struct perf_event_mmap_page *mp, char *data, size_t size,
		  struct seen *s)
{
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;

	/* Less than a ring's worth is written: no record wraps. */
	for (s->nr = 0; tail < head; tail += ((struct perf_event_header *)
					      (data + tail % size))->size) {
		struct perf_event_header *h = (void *)(data + tail % size);

		CHECK(h->type != PERF_RECORD_LOST, "records lost");
		if (s->nr < 64)
			s->rec[s->nr++] = h;
	}
	CHECK(tail == head, "records overrun the head");
	__atomic_store_n(&mp->data_tail, head, __ATOMIC_RELEASE);
}

/* The whole data of one record (the test's data fit in one piece). */
static const struct data_rec *data_of(const struct seen *s, int i,
				      uint32_t type)
{
	const struct data_rec *d = (const void *)s->rec[i];

	CHECK(i < s->nr, "record %d missing", i);
	if (i >= s->nr)
		return NULL;
	CHECK_EQ(d->header.type, PERFINJECT_PERF_RECORD_JIT_CODE_DATA);
	CHECK_EQ(d->type, type);
	if (d->header.type != PERFINJECT_PERF_RECORD_JIT_CODE_DATA ||
	    d->type != type)
		return NULL;
	CHECK_EQ(d->offset, 0);
	CHECK_EQ(d->size, d->total);
	return d;
}

static void check_op(const struct seen *s, int i, uint32_t op, uint64_t addr)
{
	const struct jit_rec *r = (const void *)s->rec[i];

	CHECK(i < s->nr, "record %d missing", i);
	if (i >= s->nr)
		return;
	CHECK_EQ(r->header.type, PERFINJECT_PERF_RECORD_JIT_CODE);
	CHECK_EQ(r->op, op);
	CHECK_EQ(r->addr, addr);
}

static void check_lines(const struct data_rec *d)
{
	const struct perf_jit_code_lines *l = (const void *)d->data;
	const char *str = (const char *)&l->lines[l->nr_lines];
	static const struct {
		uint32_t offset, line, depth;
		const char *file, *function;
	} want[] = {
		{ 0x00, 10, 0, "Hot.java", "" },
		{ 0x10, 12, 0, "Hot.java", "" },
		{ 0x10, 3, 1, "Util.java", "Util.add" },
		{ 0x40, 13, 0, "Hot.java", "" },
	};
	uint32_t i;

	CHECK_EQ(l->nr_lines, 4);
	CHECK_EQ(d->size, sizeof(*l) + 4 * sizeof(l->lines[0]) +
		 l->strings_size);
	if (l->nr_lines != 4)
		return;
	CHECK_EQ(str[0], 0);
	for (i = 0; i < 4; i++) {
		const struct perf_jit_code_line *k = &l->lines[i];

		CHECK_EQ(k->offset, want[i].offset);
		CHECK_EQ(k->line, want[i].line);
		CHECK_EQ(k->depth, want[i].depth);
		CHECK(k->file < l->strings_size &&
		      !strcmp(str + k->file, want[i].file),
		      "line %u: file at %u", i, k->file);
		CHECK(k->function < l->strings_size &&
		      !strcmp(str + k->function, want[i].function),
		      "line %u: function at %u", i, k->function);
	}
	/* Hot.java once. */
	CHECK_EQ(l->lines[0].file, l->lines[3].file);
}

int main(void)
{
	struct perfinject_frame f_a[] = {
		{ .file = "Hot.java", .line = 10 },
	};
	struct perfinject_frame f_b[] = {
		{ .file = "Util.java", .line = 3, .function = "Util.add" },
		{ .file = "Hot.java", .line = 12 },
	};
	struct perfinject_frame f_c[] = {
		{ .file = "Hot.java", .line = 13 },
	};
	uint64_t a = (uintptr_t)code, other = (uintptr_t)big;
	struct perfinject_line rows[] = {
		{ .addr = a, .frames = f_a, .nr_frames = 1 },
		{ .addr = a + 0x10, .frames = f_b, .nr_frames = 2 },
		{ .addr = a + 0x40, .frames = f_c, .nr_frames = 1 },
	};
	struct perfinject_line *many;
	struct perf_event_mmap_page *mp;
	long pgsz = sysconf(_SC_PAGESIZE);
	const struct data_rec *d;
	const struct perf_jit_code_unwind *u;
	struct perfinject *pi;
	struct seen s;
	int fd, probe;
	size_t i, size;
	char *data;

	probe = prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 0UL, 0UL);
	if (probe < 0 || !(probe & (1 << PERF_JIT_CODE_DATA)))
		SKIP("kernel has no PERF_JIT_CODE_DATA (probe %d)", probe);
	fd = t_open_jit_code_event_flags(0, PERFINJECT_ATTR_FLAG_JIT_CODE_DATA |
					 PERFINJECT_ATTR_FLAG_JIT_CODE_BYTES);
	if (fd < 0) {
		if (errno == EACCES || errno == EPERM)
			SKIP("perf_event_open: no permission");
		fprintf(stderr, "perf_event_open(jit_code_data): %s\n",
			strerror(errno));
		return T_FAIL;
	}
	size = NR_PAGES * pgsz;
	mp = mmap(NULL, size + pgsz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mp == MAP_FAILED)
		return T_FAIL;
	data = (char *)mp + pgsz;
	for (i = 0; i < sizeof(code); i++)
		code[i] = i * 7 + 1;

	PERFINJECT_OPTS(opts, .backends = PERFINJECT_BACKEND_KERNEL,
			.flags = PERFINJECT_F_STRICT);
	pi = perfinject__new(&opts);
	CHECK(pi, "new: %s", strerror(errno));
	if (!pi)
		return t_done();

	/* A batch: a plain load, a load with data, an unload. */
	{
		PERFINJECT_LOAD_OPTS(lo, .lines = rows, .nr_lines = 3,
				     .eh_frame = eh_frame,
				     .eh_frame_sz = sizeof(eh_frame),
				     .eh_frame_hdr = eh_hdr,
				     .eh_frame_hdr_sz = sizeof(eh_hdr));
		struct perfinject_code_op ops[] = {
			{ .op = PERFINJECT_OP_LOAD, .addr = other, .len = 64,
			  .name = "plain" },
			{ .op = PERFINJECT_OP_LOAD, .addr = a,
			  .len = sizeof(code), .code_index = 7,
			  .name = "Hot.alpha", .opts = &lo },
			{ .op = PERFINJECT_OP_UNLOAD, .addr = other },
		};

		CHECK_EQ(perfinject__batch(pi, ops, 3), 3);
	}
	drain(mp, data, size, &s);
	/* plain, its bytes, Hot.alpha, its bytes, lines, unwind, unload */
	CHECK_EQ(s.nr, 7);
	check_op(&s, 0, PERF_JIT_CODE_LOAD, other);
	d = data_of(&s, 1, PERF_JIT_CODE_DATA_BYTES);
	if (d)
		CHECK_EQ(d->total, 64);
	check_op(&s, 2, PERF_JIT_CODE_LOAD, a);
	d = data_of(&s, 3, PERF_JIT_CODE_DATA_BYTES);
	if (d) {
		CHECK_EQ(d->addr, a);
		CHECK_EQ(d->code_index, 7);
		CHECK_EQ(d->total, sizeof(code));
		CHECK(!memcmp(d->data, code, sizeof(code)), "code bytes");
	}
	d = data_of(&s, 4, PERF_JIT_CODE_DATA_LINES);
	if (d) {
		CHECK_EQ(d->addr, a);
		CHECK_EQ(d->code_index, 7);
		check_lines(d);
	}
	d = data_of(&s, 5, PERF_JIT_CODE_DATA_UNWIND);
	if (d) {
		u = (const void *)d->data;
		CHECK_EQ(d->size, sizeof(*u) + sizeof(eh_frame) +
			 sizeof(eh_hdr));
		CHECK_EQ(u->format, PERF_JIT_CODE_UNWIND_EH_FRAME);
		CHECK_EQ(u->eh_frame_hdr_size, sizeof(eh_hdr));
		/* Where jitdump maps it: after the code, 8-aligned. */
		CHECK_EQ(u->addr, a + sizeof(code));
		CHECK(!memcmp(u + 1, eh_frame, sizeof(eh_frame)) &&
		      !memcmp((const char *)(u + 1) + sizeof(eh_frame), eh_hdr,
			      sizeof(eh_hdr)),
		      "unwind bytes");
	}
	check_op(&s, 6, PERF_JIT_CODE_UNLOAD, other);
	CHECK_EQ(perfinject__unload(pi, a), 0);
	drain(mp, data, size, &s);

	/*
	 * 50,000 rows are 1.2 MB in the kernel's format, over its 1 MiB:
	 * the table is dropped, the load and its bytes go.
	 */
	many = calloc(50000, sizeof(*many));
	CHECK(many, "calloc");
	if (many) {
		PERFINJECT_LOAD_OPTS(lo, .lines = many, .nr_lines = 50000);

		for (i = 0; i < 50000; i++) {
			many[i].addr = other + i;
			many[i].frames = f_a;
			many[i].nr_frames = 1;
		}
		CHECK_EQ(perfinject__load_opts(pi, "Big.method", other,
					       sizeof(big), 8, &lo), 0);
		drain(mp, data, size, &s);
		check_op(&s, 0, PERF_JIT_CODE_LOAD, other);
		/* 64 KiB of code: four pieces of 16 KiB, then nothing. */
		CHECK_EQ(s.nr, 5);
		for (i = 1; i < (size_t)s.nr; i++) {
			d = (const void *)s.rec[i];
			CHECK(d->header.type ==
			      PERFINJECT_PERF_RECORD_JIT_CODE_DATA &&
			      d->type == PERF_JIT_CODE_DATA_BYTES,
			      "record %zu: type %u", i, d->header.type);
		}
		CHECK_EQ(perfinject__count(pi), 1);
		free(many);
	}

	/* A rundown without PERFINJECT_F_REGISTRY_DATA: the load, its bytes. */
	CHECK_EQ(perfinject__unload(pi, other), 0);
	drain(mp, data, size, &s);
	{
		PERFINJECT_LOAD_OPTS(lo, .lines = rows, .nr_lines = 3,
				     .eh_frame = eh_frame,
				     .eh_frame_sz = sizeof(eh_frame),
				     .eh_frame_hdr = eh_hdr,
				     .eh_frame_hdr_sz = sizeof(eh_hdr));

		CHECK_EQ(perfinject__load_opts(pi, "Hot.alpha", a,
					       sizeof(code), 7, &lo), 0);
	}
	drain(mp, data, size, &s);
	CHECK_EQ(s.nr, 4);
	CHECK_EQ(perfinject__rundown(pi), 1);
	drain(mp, data, size, &s);
	CHECK_EQ(s.nr, 2);
	check_op(&s, 0, PERF_JIT_CODE_LOAD, a);
	data_of(&s, 1, PERF_JIT_CODE_DATA_BYTES);
	perfinject__free(pi);
	drain(mp, data, size, &s);

	/*
	 * With it, the registry keeps the line table and the unwind
	 * information: the load sends those, and a rundown sends them again
	 * after the load and its bytes.
	 */
	{
		PERFINJECT_OPTS(kopts, .backends = PERFINJECT_BACKEND_KERNEL,
				.flags = PERFINJECT_F_STRICT |
					 PERFINJECT_F_REGISTRY_DATA);
		PERFINJECT_LOAD_OPTS(lo, .lines = rows, .nr_lines = 3,
				     .eh_frame = eh_frame,
				     .eh_frame_sz = sizeof(eh_frame),
				     .eh_frame_hdr = eh_hdr,
				     .eh_frame_hdr_sz = sizeof(eh_hdr));
		int round;

		pi = perfinject__new(&kopts);
		CHECK(pi, "new: %s", strerror(errno));
		if (!pi)
			return t_done();
		CHECK_EQ(perfinject__load_opts(pi, "Hot.alpha", a,
					       sizeof(code), 7, &lo), 0);
		for (round = 0; round < 2; round++) {
			if (round)
				CHECK_EQ(perfinject__rundown(pi), 1);
			drain(mp, data, size, &s);
			CHECK_EQ(s.nr, 4);
			check_op(&s, 0, PERF_JIT_CODE_LOAD, a);
			data_of(&s, 1, PERF_JIT_CODE_DATA_BYTES);
			d = data_of(&s, 2, PERF_JIT_CODE_DATA_LINES);
			if (d)
				check_lines(d);
			d = data_of(&s, 3, PERF_JIT_CODE_DATA_UNWIND);
			if (d)
				CHECK_EQ(((const struct perf_jit_code_unwind *)
					  d->data)->addr, a + sizeof(code));
		}
		perfinject__free(pi);
	}
	return t_done();
}
