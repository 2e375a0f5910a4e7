// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The data of registry entries (PERFINJECT_F_REGISTRY_DATA): a load with
 * a line table and unwind information publishes both, in the kernel's
 * formats, as doc/registry.md lays them out; a move publishes a copy
 * whose unwind information moved with the code, or shares a line table
 * that has none, as long as an entry has it; an unload, or a load the
 * kernel would refuse the line table of, publishes what it should; a
 * handle without the flag publishes none. Read from the published view
 * itself, as a reader outside would, so no kernel is needed.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "../src/uapi_jit_code.h"

_Static_assert(offsetof(struct perfinject_registry_entry, data_size) == 52,
	       "data_size where the reserved word was");
_Static_assert(offsetof(struct perfinject_registry_entry, data) == 56,
	       "data after the first published entry");
_Static_assert(sizeof(struct perfinject_registry_entry) == 64,
	       "entry size");

static unsigned char code[4096];
static const unsigned char eh_frame[24] = "eh_frame bytes, 24 long";
static const unsigned char eh_hdr[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

/* The published entry of the live code at @addr, or NULL. */
static const struct perfinject_registry_entry *entry_at(uint64_t addr)
{
	const struct perfinject_registry_descriptor *d =
		perfinject_registry__descriptor();
	const uint64_t *table = (const void *)(uintptr_t)d->chunks;
	uint64_t c, i;

	for (c = 0; c < d->nr_chunks; c++) {
		const char *chunk = (const void *)(uintptr_t)table[c];

		for (i = 0; i < d->chunk_slots; i++) {
			const struct perfinject_registry_entry *e =
				(const void *)(chunk + i * d->entry_size);

			if (e->name && e->addr == addr)
				return e;
		}
	}
	return NULL;
}

/* The payload of @type in @e's data, its size in *@size; or NULL. */
static const void *payload(const struct perfinject_registry_entry *e,
			   uint32_t type, uint32_t *size)
{
	const char *p = (const void *)(uintptr_t)e->data;
	uint32_t off = 0;

	while (off + sizeof(struct perfinject_registry_data) <= e->data_size) {
		const struct perfinject_registry_data *h = (const void *)(p + off);

		off += sizeof(*h);
		CHECK(h->size <= e->data_size - off, "payload of %u bytes past the data",
		      h->size);
		if (h->type == type) {
			*size = h->size;
			return h + 1;
		}
		off += (h->size + 7) & ~7U;
	}
	return NULL;
}

/* A line table: rows every 16 bytes, each with an inlined frame. */
#define ROWS 4
static struct perfinject_frame frames[ROWS][2];
static struct perfinject_line lines[ROWS];

static void make_lines(uint64_t addr)
{
	int i;

	for (i = 0; i < ROWS; i++) {
		frames[i][0] = (struct perfinject_frame){
			.file = "inner.js", .function = "step", .line = 20 + i,
		};
		frames[i][1] = (struct perfinject_frame){
			.file = "outer.js", .line = 10 + i, .column = 3,
		};
		lines[i] = (struct perfinject_line){
			.addr = addr + 16 * i, .frames = frames[i], .nr_frames = 2,
		};
	}
}

/* Options of a load with make_lines()'s table and unwind information. */
static struct perfinject_load_opts *data_opts(uint64_t addr)
{
	static struct perfinject_load_opts lo;

	make_lines(addr);
	memset(&lo, 0, sizeof(lo));
	lo.sz = sizeof(lo);
	lo.line_sz = sizeof(struct perfinject_line);
	lo.frame_sz = sizeof(struct perfinject_frame);
	lo.lines = lines;
	lo.nr_lines = ROWS;
	lo.eh_frame = eh_frame;
	lo.eh_frame_sz = sizeof(eh_frame);
	lo.eh_frame_hdr = eh_hdr;
	lo.eh_frame_hdr_sz = sizeof(eh_hdr);
	return &lo;
}

/* The line table in @e's data is make_lines()'s, from the code's start. */
static void check_lines(const struct perfinject_registry_entry *e)
{
	const struct perf_jit_code_lines *l;
	const char *strings;
	uint32_t size = 0;
	int i;

	l = payload(e, PERF_JIT_CODE_DATA_LINES, &size);
	CHECK(l, "no line table in the data");
	if (!l)
		return;
	CHECK_EQ(l->nr_lines, 2 * ROWS);
	CHECK_EQ(size, sizeof(*l) + 2 * ROWS * sizeof(l->lines[0]) +
		 l->strings_size);
	strings = (const char *)&l->lines[l->nr_lines];
	for (i = 0; i < 2 * ROWS && i < (int)l->nr_lines; i++) {
		const struct perf_jit_code_line *k = &l->lines[i];
		/* outermost first */
		int row = i / 2, depth = i % 2;

		CHECK_EQ(k->offset, 16 * row);
		CHECK_EQ(k->depth, depth);
		CHECK_EQ(k->line, depth ? 20 + row : 10 + row);
		CHECK(k->file < l->strings_size &&
		      !strcmp(strings + k->file, depth ? "inner.js" : "outer.js"),
		      "row %d: file", i);
		if (depth)
			CHECK(k->function < l->strings_size &&
			      !strcmp(strings + k->function, "step"),
			      "row %d: function", i);
	}
}

/* The unwind information in @e's data, as if mapped at @at. */
static void check_unwind(const struct perfinject_registry_entry *e,
			 uint64_t at)
{
	const struct perf_jit_code_unwind *u;
	uint32_t size = 0;

	u = payload(e, PERF_JIT_CODE_DATA_UNWIND, &size);
	CHECK(u, "no unwind information in the data");
	if (!u)
		return;
	CHECK_EQ(size, sizeof(*u) + sizeof(eh_frame) + sizeof(eh_hdr));
	CHECK_EQ(u->format, PERF_JIT_CODE_UNWIND_EH_FRAME);
	CHECK_EQ(u->eh_frame_hdr_size, sizeof(eh_hdr));
	CHECK(u->addr == at, "unwind information at %#llx, not %#llx",
	      (unsigned long long)u->addr, (unsigned long long)at);
	CHECK(!memcmp(u + 1, eh_frame, sizeof(eh_frame)) &&
	      !memcmp((const char *)(u + 1) + sizeof(eh_frame), eh_hdr,
		      sizeof(eh_hdr)), "unwind bytes");
}

static struct perfinject *open_handle(unsigned int flags)
{
	PERFINJECT_OPTS(opts, .flags = PERFINJECT_F_REGISTRY_ONLY | flags);
	struct perfinject *pi = perfinject__new(&opts);

	CHECK(pi, "perfinject__new: %s", strerror(errno));
	if (!pi)
		exit(t_done());
	return pi;
}

int main(void)
{
	uint64_t a = (uintptr_t)code, b = a + 1024, c = a + 2048;
	const struct perfinject_registry_entry *e;
	const struct perfinject_registry_descriptor *d =
		perfinject_registry__descriptor();
	struct perfinject_code_op ops[2];
	struct perfinject *pi;
	uint64_t old_data;
	int err;

	CHECK_EQ(d->entry_size, sizeof(struct perfinject_registry_entry));

	/* Not with a handle that keeps out of the registry. */
	{
		PERFINJECT_OPTS(opts, .flags = PERFINJECT_F_NO_REGISTRY |
					       PERFINJECT_F_REGISTRY_DATA);

		errno = 0;
		CHECK(!perfinject__new(&opts) && errno == EINVAL,
		      "NO_REGISTRY | REGISTRY_DATA: %s", strerror(errno));
	}

	pi = open_handle(PERFINJECT_F_REGISTRY_DATA);
	CHECK_EQ(perfinject__load_opts(pi, "f", a, 100, 0, data_opts(a)), 0);
	e = entry_at(a);
	CHECK(e, "no entry for the load");
	if (!e)
		return t_done();
	CHECK(e->data && e->data_size && e->data_size % 8 == 0,
	      "data %#llx of %u bytes", (unsigned long long)e->data,
	      e->data_size);
	check_lines(e);
	/* Past the code rounded up to 8, as jitdump has it. */
	check_unwind(e, a + 104);

	/* A move: a new copy, the unwind information moved with the code. */
	old_data = e->data;
	CHECK_EQ(perfinject__move(pi, a, b), 0);
	CHECK(!entry_at(a), "the old address still published");
	e = entry_at(b);
	CHECK(e, "no entry after the move");
	if (e) {
		CHECK(e->data && e->data != old_data, "data not copied on the move");
		check_lines(e);
		check_unwind(e, b + 104);
	}

	/* A load and its move in one batch: the move copies the new data. */
	ops[0] = (struct perfinject_code_op){
		.op = PERFINJECT_OP_LOAD, .addr = c, .len = 60,
		.name = "g", .opts = data_opts(c),
	};
	ops[1] = (struct perfinject_code_op){
		.op = PERFINJECT_OP_MOVE, .addr = c, .new_addr = c + 512,
	};
	CHECK_EQ(perfinject__batch(pi, ops, 2), 2);
	e = entry_at(c + 512);
	CHECK(e, "no entry after a batch's load and move");
	if (e) {
		check_lines(e);
		check_unwind(e, c + 512 + 64);
	}

	/*
	 * A line table alone moves as it is (its offsets are from the
	 * code's start): the entries a move makes share it, and it lives
	 * as long as one of them, past the reaping of the others.
	 */
	{
		struct perfinject_load_opts *lo = data_opts(c);
		uint64_t lines_data;

		lo->eh_frame = NULL;
		lo->eh_frame_sz = 0;
		lo->eh_frame_hdr = NULL;
		lo->eh_frame_hdr_sz = 0;
		CHECK_EQ(perfinject__load_opts(pi, "h", c, 60, 0, lo), 0);
		e = entry_at(c);
		CHECK(e && e->data, "no data for a load with a line table");
		lines_data = e ? e->data : 0;
		CHECK_EQ(perfinject__move(pi, c, c + 256), 0);
		CHECK_EQ(perfinject__move(pi, c + 256, c + 768), 0);
		/* Commits that reap the entries the moves retired. */
		CHECK_EQ(perfinject__load(pi, "plain", a, 32, 0), 0);
		CHECK_EQ(perfinject__unload(pi, a), 0);
		e = entry_at(c + 768);
		CHECK(e, "no entry after two moves");
		if (e) {
			CHECK(e->data == lines_data,
			      "a line table alone copied on a move");
			check_lines(e);
			CHECK(!payload(e, PERF_JIT_CODE_DATA_UNWIND, &(uint32_t){ 0 }),
			      "unwind information without any given");
		}
		CHECK_EQ(perfinject__unload(pi, c + 768), 0);
	}

	/* Unloads clear the data with the slot. */
	CHECK_EQ(perfinject__unload(pi, b), 0);
	CHECK(!entry_at(b), "unloaded code still published");
	CHECK_EQ(perfinject__unload(pi, c + 512), 0);

	/* No options, no data. */
	CHECK_EQ(perfinject__load(pi, "plain", a, 32, 0), 0);
	e = entry_at(a);
	CHECK(e && !e->data && !e->data_size, "data for a load without options");
	CHECK_EQ(perfinject__unload(pi, a), 0);

	/*
	 * A line table over the kernel's limit is left out; the unwind
	 * information and the load stand.
	 */
	{
		size_t nr = PERF_JIT_CODE_LINES_MAX /
			    sizeof(struct perf_jit_code_line) + 1, i;
		struct perfinject_line *big = calloc(nr, sizeof(*big));
		static struct perfinject_frame f = { .file = "big.js", .line = 1 };
		uint32_t size;

		CHECK(big, "calloc");
		if (!big)
			return t_done();
		for (i = 0; i < nr; i++)
			big[i] = (struct perfinject_line){
				.addr = a, .frames = &f, .nr_frames = 1,
			};
		PERFINJECT_LOAD_OPTS(lo, .lines = big, .nr_lines = nr,
				     .eh_frame = eh_frame,
				     .eh_frame_sz = sizeof(eh_frame),
				     .eh_frame_hdr = eh_hdr,
				     .eh_frame_hdr_sz = sizeof(eh_hdr));
		err = perfinject__load_opts(pi, "big", a, 64, 0, &lo);
		CHECK_EQ(err, 0);
		e = entry_at(a);
		CHECK(e, "no entry for a load with too large a line table");
		if (e) {
			CHECK(!payload(e, PERF_JIT_CODE_DATA_LINES, &size),
			      "a line table over the kernel's limit kept");
			CHECK(payload(e, PERF_JIT_CODE_DATA_UNWIND, &size),
			      "its unwind information dropped");
		}
		CHECK_EQ(perfinject__unload(pi, a), 0);
		free(big);
	}
	perfinject__free(pi);

	/* Without the flag, the registry keeps names only. */
	pi = open_handle(0);
	CHECK_EQ(perfinject__load_opts(pi, "f", a, 100, 0, data_opts(a)), 0);
	e = entry_at(a);
	CHECK(e && !e->data && !e->data_size,
	      "data kept without PERFINJECT_F_REGISTRY_DATA");
	perfinject__free(pi);
	CHECK(!entry_at(a), "entry left after perfinject__free()");
	return t_done();
}
