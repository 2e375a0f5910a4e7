// SPDX-License-Identifier: GPL-2.0
/*
 * PERF_RECORD_JIT_CODE_DATA: the code's bytes, line tables and unwind
 * information that follow a load.
 *
 * - Code bytes reach only the events that set attr.jit_code_bytes, in
 *   pieces that put together give exactly the bytes at the load's range,
 *   after the load's record; a listener that did not ask gets nothing.
 * - Bytes are capped at PERF_JIT_CODE_BYTES_MAX, and end where the range
 *   cannot be read, while the load itself is consumed.
 * - Line tables and unwind information reach the events that set
 *   attr.jit_code_data, byte for byte, also when they take several
 *   records; bad payloads get their errno and write nothing.
 * - A replay writes the bytes of the process it names, read from that
 *   process's memory, marked as synthesized; naming a process the caller
 *   may not read fails, even where nothing would be written.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"

#include "jit_code.h"

#define BIG_PAGES	1024	/* 4 MiB of ring: a whole capped load fits */

/* An event on the calling thread with the given data bits. */
static int open_data_listener(struct ev *ev, bool data, bool bytes,
			      unsigned int pages)
{
	struct perf_event_attr attr;

	attr_init(&attr, true);
	attr.jit_code_data = data;
	attr.jit_code_bytes = bytes;
	return ev_open(ev, &attr, 0, -1, pages);
}

/*
 * The whole of the data of @type about @addr in @recs, put together from
 * its pieces, each checked: well formed, in order, zero-padded, after the
 * load. Returns the bytes (malloc'ed) and their number in @len, or NULL
 * with @why set.
 */
static unsigned char *gather(const struct records *recs, __u32 type,
			     __u64 addr, pid_t pid, __u32 flags, __u32 *len,
			     unsigned int *pieces, const char **why)
{
	unsigned char *whole = NULL;
	__u64 load_time = 0, last_time = 0;
	__u32 next = 0, total = 0;
	bool loaded = false;
	unsigned int i, j;

	*pieces = 0;
	for (i = 0; i < recs->nr; i++) {
		const struct perf_event_header *hdr = recs->rec[i];
		const struct data_record *rec = (const void *)hdr;
		const struct jit_record *load = (const void *)hdr;
		size_t padded;

		if (hdr->type == PERF_RECORD_JIT_CODE &&
		    load->op == PERF_JIT_CODE_LOAD && load->addr == addr) {
			loaded = true;
			load_time = rec_time(hdr);
			continue;
		}
		if (hdr->type != PERF_RECORD_JIT_CODE_DATA || rec->type != type ||
		    rec->addr != addr)
			continue;
		if (!loaded) {
			*why = "a piece came before its load";
			goto fail;
		}
		padded = ALIGN8(rec->size);
		if (hdr->size != sizeof(*rec) + padded + sizeof(struct sample_id)) {
			*why = "a piece's size is not its header's";
			goto fail;
		}
		if (rec->__reserved || rec->flags != flags ||
		    rec->pid != (__u32)pid) {
			*why = "a piece's reserved, flags or pid field is wrong";
			goto fail;
		}
		for (j = rec->size; j < padded; j++)
			if (rec->data[j]) {
				*why = "a piece is not zero-padded";
				goto fail;
			}
		if (!whole) {
			total = rec->total;
			whole = malloc(total ? total : 1);
			if (!whole) {
				*why = "out of memory";
				return NULL;
			}
		}
		if (rec->total != total || rec->offset != next ||
		    rec->size > total - next || !rec->size) {
			*why = "pieces are not in order, or overlap";
			goto fail;
		}
		if (rec_time(hdr) < load_time || rec_time(hdr) < last_time) {
			*why = "a piece is older than its load or the piece before";
			goto fail;
		}
		last_time = rec_time(hdr);
		memcpy(whole + next, rec->data, rec->size);
		next += rec->size;
		(*pieces)++;
	}
	if (!whole) {
		*why = "no data";
		return NULL;
	}
	*len = next;
	return whole;
fail:
	free(whole);
	return NULL;
}

static unsigned int count_data(const struct records *recs, __u32 type)
{
	unsigned int i, n = 0;

	for (i = 0; i < recs->nr; i++) {
		const struct data_record *rec = (const void *)recs->rec[i];

		n += rec->header.type == PERF_RECORD_JIT_CODE_DATA &&
		     rec->type == type;
	}
	return n;
}

/* Code to describe: @len bytes of a pattern, in executable memory. */
static unsigned char *make_code(size_t len, unsigned int seed)
{
	unsigned char *code = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (code == MAP_FAILED)
		return NULL;
	for (i = 0; i < len; i++)
		code[i] = (unsigned char)(i * 131 + seed + (i >> 8));
	return code;
}

/*
 * A line table: two frames inlined at offset 0x10, and a line of the
 * outer function alone at 0x40. @extra more lines of depth 0, one byte
 * apart from 0x80 on, make it as big as a test needs.
 */
static void *make_lines(unsigned int extra, __u32 *size)
{
	static const char strings[] = "\0Hot.java\0Hot.alpha\0Hot.beta";
	struct perf_jit_code_lines *lines;
	struct perf_jit_code_line *l;
	unsigned int nr = 4 + extra, i;
	size_t bytes = sizeof(*lines) + nr * sizeof(*l) + sizeof(strings);

	lines = calloc(1, bytes);
	if (!lines)
		return NULL;
	lines->nr_lines = nr;
	lines->strings_size = sizeof(strings);
	l = lines->lines;
	l[0] = (struct perf_jit_code_line){ 0x00, 10, 5, 0, 1, 0 };
	l[1] = (struct perf_jit_code_line){ 0x10, 12, 9, 0, 1, 0 };
	l[2] = (struct perf_jit_code_line){ 0x10, 20, 3, 1, 1, 10 };
	l[3] = (struct perf_jit_code_line){ 0x40, 13, 1, 0, 1, 0 };
	for (i = 0; i < extra; i++)
		l[4 + i] = (struct perf_jit_code_line){ 0x80 + i, 100 + i, 0,
							 0, 1, 0 };
	memcpy(&l[nr], strings, sizeof(strings));
	*size = bytes;
	return lines;
}

static void entry_data(struct perf_jit_code_entry *e, __u64 addr, __u64 len,
		       __u64 index, __u32 type, const void *data, __u32 size)
{
	memset(e, 0, sizeof(*e));
	e->op = PERF_JIT_CODE_DATA;
	e->addr = addr;
	e->len = len;
	e->code_index = index;
	e->data = (uintptr_t)data;
	e->data_type = type;
	e->data_size = size;
}

FIXTURE(jit_data)
{
	struct ev evs[3];	/* jit_code only, jit_code_data, jit_code_bytes */
	struct records recs[3];
};

FIXTURE_SETUP(jit_data)
{
	int i;

	for (i = 0; i < 3; i++)
		self->evs[i].fd = -1;
	memset(self->recs, 0, sizeof(self->recs));
	if (!jit_code_supported())
		SKIP(return, "the kernel has no PR_PERF_JIT_CODE");
	i = open_data_listener(&self->evs[0], false, false, DATA_PAGES);
	if (perf_unavailable(i))
		SKIP(return, "perf_event_open() not allowed here");
	ASSERT_EQ(0, i);
	ASSERT_EQ(0, open_data_listener(&self->evs[1], true, false, BIG_PAGES));
	ASSERT_EQ(0, open_data_listener(&self->evs[2], false, true, BIG_PAGES));
}

FIXTURE_TEARDOWN(jit_data)
{
	int i;

	for (i = 0; i < 3; i++)
		records_free(&self->recs[i]);
	for (i = 0; i < 3; i++)
		ev_close(&self->evs[i]);
}

static void drain_all(struct __test_metadata *_metadata, struct ev *evs,
		      struct records *recs)
{
	int i;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, ev_drain(&evs[i], &recs[i]));
}

/* The bytes of a 40 KiB load reach the listener that asked, and it alone. */
TEST_F(jit_data, code_bytes)
{
	size_t len = 40 * 1024 + 24;
	unsigned char *code = make_code(len, 7), *got;
	struct perf_jit_code_entry e[2];
	struct perf_jit_code_args args;
	const char *why = NULL;
	unsigned int pieces;
	__u32 got_len;

	ASSERT_NE(NULL, code);
	entry_load(&e[0], (uintptr_t)code, len, 42, "Hot.alpha");
	entry_unload(&e[1], (uintptr_t)code, len, 42);
	args_init(&args, e, 2);
	ASSERT_EQ(2, jit_call_all(-1, &args));
	drain_all(_metadata, self->evs, self->recs);

	/* Everyone gets the load and the unload; bytes only where asked. */
	EXPECT_EQ(2, records_count(&self->recs[0], PERF_RECORD_JIT_CODE));
	EXPECT_EQ(2, records_count(&self->recs[1], PERF_RECORD_JIT_CODE));
	EXPECT_EQ(2, records_count(&self->recs[2], PERF_RECORD_JIT_CODE));
	EXPECT_EQ(0, records_count(&self->recs[0], PERF_RECORD_JIT_CODE_DATA));
	EXPECT_EQ(0, records_count(&self->recs[1], PERF_RECORD_JIT_CODE_DATA));

	got = gather(&self->recs[2], PERF_JIT_CODE_DATA_BYTES, (uintptr_t)code,
		     getpid(), 0, &got_len, &pieces, &why);
	ASSERT_NE(NULL, got) TH_LOG("%s", why);
	EXPECT_EQ(len, got_len);
	EXPECT_EQ(3, pieces);
	EXPECT_EQ(0, memcmp(got, code, len));
	/* The unload comes after the last piece. */
	EXPECT_EQ(PERF_RECORD_JIT_CODE,
		  self->recs[2].rec[self->recs[2].nr - 1]->type);
	free(got);
	munmap(code, len);
}

/* A load longer than PERF_JIT_CODE_BYTES_MAX gets that many bytes. */
TEST_F(jit_data, code_bytes_capped)
{
	size_t len = PERF_JIT_CODE_BYTES_MAX + 8192;
	unsigned char *code = make_code(len, 3), *got;
	struct perf_jit_code_entry e;
	struct perf_jit_code_args args;
	const char *why = NULL;
	unsigned int pieces;
	__u32 got_len;

	ASSERT_NE(NULL, code);
	entry_load(&e, (uintptr_t)code, len, 1, "Big.method");
	args_init(&args, &e, 1);
	ASSERT_EQ(1, jit_call_all(-1, &args));
	drain_all(_metadata, self->evs, self->recs);
	EXPECT_EQ(0, records_count(&self->recs[2], PERF_RECORD_LOST));

	got = gather(&self->recs[2], PERF_JIT_CODE_DATA_BYTES, (uintptr_t)code,
		     getpid(), 0, &got_len, &pieces, &why);
	ASSERT_NE(NULL, got) TH_LOG("%s", why);
	EXPECT_EQ(PERF_JIT_CODE_BYTES_MAX, got_len);
	EXPECT_EQ(PERF_JIT_CODE_BYTES_MAX / 16384, pieces);
	EXPECT_EQ(0, memcmp(got, code, got_len));
	free(got);
	munmap(code, len);
}

/*
 * Bytes end where the range cannot be read: a load over a mapped page
 * and an unmapped one gets the first page's bytes, and is consumed.
 */
TEST_F(jit_data, code_bytes_fault)
{
	long page = page_size();
	size_t len = 8 * page;
	unsigned char *code = make_code(len, 9), *got;
	struct perf_jit_code_entry e[2];
	struct perf_jit_code_args args;
	const char *why = NULL;
	unsigned int pieces;
	__u32 got_len;

	ASSERT_NE(NULL, code);
	/* 16 KiB pieces: the second one runs into the hole. */
	ASSERT_EQ(0, munmap(code + 6 * page, 2 * page));
	entry_load(&e[0], (uintptr_t)code, len, 5, "Torn.method");
	entry_unload(&e[1], (uintptr_t)code, len, 5);
	args_init(&args, e, 2);
	ASSERT_EQ(2, jit_call_all(-1, &args));
	drain_all(_metadata, self->evs, self->recs);
	EXPECT_EQ(2, records_count(&self->recs[2], PERF_RECORD_JIT_CODE));

	got = gather(&self->recs[2], PERF_JIT_CODE_DATA_BYTES, (uintptr_t)code,
		     getpid(), 0, &got_len, &pieces, &why);
	ASSERT_NE(NULL, got) TH_LOG("%s", why);
	EXPECT_EQ(16384, got_len);
	EXPECT_EQ(1, pieces);
	EXPECT_EQ(0, memcmp(got, code, got_len));
	free(got);
	munmap(code, 6 * page);
}

/* A line table with inlined frames, byte for byte, to jit_code_data only. */
TEST_F(jit_data, lines)
{
	struct perf_jit_code_entry e[3];
	struct perf_jit_code_args args;
	__u32 size, got_len;
	void *lines = make_lines(0, &size);
	const char *why = NULL;
	unsigned int pieces;
	unsigned char *got;

	ASSERT_NE(NULL, lines);
	entry_load(&e[0], CODE_BASE, 0x100, 9, "Hot.alpha");
	entry_data(&e[1], CODE_BASE, 0x100, 9, PERF_JIT_CODE_DATA_LINES,
		   lines, size);
	entry_unload(&e[2], CODE_BASE, 0x100, 9);
	args_init(&args, e, 3);
	ASSERT_EQ(3, jit_call_all(-1, &args));
	drain_all(_metadata, self->evs, self->recs);

	/* A DATA entry has no PERF_RECORD_JIT_CODE of its own. */
	EXPECT_EQ(2, records_count(&self->recs[0], PERF_RECORD_JIT_CODE));
	EXPECT_EQ(0, records_count(&self->recs[0], PERF_RECORD_JIT_CODE_DATA));
	EXPECT_EQ(0, records_count(&self->recs[2], PERF_RECORD_JIT_CODE_DATA));
	EXPECT_EQ(1, count_data(&self->recs[1], PERF_JIT_CODE_DATA_LINES));

	got = gather(&self->recs[1], PERF_JIT_CODE_DATA_LINES, CODE_BASE,
		     getpid(), 0, &got_len, &pieces, &why);
	ASSERT_NE(NULL, got) TH_LOG("%s", why);
	EXPECT_EQ(size, got_len);
	EXPECT_EQ(0, memcmp(got, lines, size));
	/* load, lines, unload: in that order. */
	ASSERT_EQ(3, self->recs[1].nr);
	EXPECT_EQ(PERF_RECORD_JIT_CODE, self->recs[1].rec[0]->type);
	EXPECT_EQ(PERF_RECORD_JIT_CODE_DATA, self->recs[1].rec[1]->type);
	EXPECT_EQ(PERF_RECORD_JIT_CODE, self->recs[1].rec[2]->type);
	free(got);
	free(lines);
}

/* A line table of about 120 KiB comes in pieces that add up to it. */
TEST_F(jit_data, lines_in_pieces)
{
	struct perf_jit_code_entry e[2];
	struct perf_jit_code_args args;
	__u32 size, got_len;
	void *lines = make_lines(5000, &size);
	const char *why = NULL;
	unsigned int pieces;
	unsigned char *got;

	ASSERT_NE(NULL, lines);
	entry_load(&e[0], CODE_BASE, 0x4000, 11, "Long.method");
	entry_data(&e[1], CODE_BASE, 0x4000, 11, PERF_JIT_CODE_DATA_LINES,
		   lines, size);
	args_init(&args, e, 2);
	ASSERT_EQ(2, jit_call_all(-1, &args));
	drain_all(_metadata, self->evs, self->recs);

	got = gather(&self->recs[1], PERF_JIT_CODE_DATA_LINES, CODE_BASE,
		     getpid(), 0, &got_len, &pieces, &why);
	ASSERT_NE(NULL, got) TH_LOG("%s", why);
	EXPECT_EQ(size, got_len);
	EXPECT_EQ((size + 16383) / 16384, pieces);
	EXPECT_EQ(0, memcmp(got, lines, size));
	free(got);
	free(lines);
}

/* Unwind information, byte for byte. */
TEST_F(jit_data, unwind)
{
	struct {
		struct perf_jit_code_unwind hdr;
		unsigned char bytes[40];
	} unwind;
	struct perf_jit_code_entry e[2];
	struct perf_jit_code_args args;
	const char *why = NULL;
	unsigned int pieces, i;
	unsigned char *got;
	__u32 got_len;

	memset(&unwind, 0, sizeof(unwind));
	unwind.hdr.format = PERF_JIT_CODE_UNWIND_EH_FRAME;
	unwind.hdr.eh_frame_hdr_size = 16;
	unwind.hdr.addr = CODE_BASE + 0x100;
	for (i = 0; i < sizeof(unwind.bytes); i++)
		unwind.bytes[i] = i + 1;
	entry_load(&e[0], CODE_BASE, 0x100, 3, "Hot.beta");
	entry_data(&e[1], CODE_BASE, 0x100, 3, PERF_JIT_CODE_DATA_UNWIND,
		   &unwind, sizeof(unwind));
	args_init(&args, e, 2);
	ASSERT_EQ(2, jit_call_all(-1, &args));
	drain_all(_metadata, self->evs, self->recs);

	got = gather(&self->recs[1], PERF_JIT_CODE_DATA_UNWIND, CODE_BASE,
		     getpid(), 0, &got_len, &pieces, &why);
	ASSERT_NE(NULL, got) TH_LOG("%s", why);
	EXPECT_EQ(sizeof(unwind), got_len);
	EXPECT_EQ(0, memcmp(got, &unwind, sizeof(unwind)));
	EXPECT_EQ(0, count_data(&self->recs[2], PERF_JIT_CODE_DATA_UNWIND));
	free(got);
}

/* Bad payloads: their errno, and no record of theirs anywhere. */
TEST_F(jit_data, bad_payloads)
{
	struct {
		struct perf_jit_code_unwind hdr;
		unsigned char bytes[24];
	} unwind;
	struct perf_jit_code_lines *l;
	struct perf_jit_code_entry e[2];
	struct perf_jit_code_args args;
	__u32 size;
	void *lines = make_lines(0, &size);
	void *big = calloc(1, PERF_JIT_CODE_LINES_MAX + 8);
	int i;

	ASSERT_NE(NULL, lines);
	ASSERT_NE(NULL, big);
	l = lines;
	memset(&unwind, 0, sizeof(unwind));
	unwind.hdr.format = PERF_JIT_CODE_UNWIND_EH_FRAME;

	for (i = 0; ; i++) {
		const char *what;
		int expect = -EINVAL, ret;

		entry_load(&e[0], CODE_BASE, 0x100, 4, "Bad.payload");
		entry_data(&e[1], CODE_BASE, 0x100, 4,
			   PERF_JIT_CODE_DATA_LINES, lines, size);
		switch (i) {
		case 0:
			what = "unknown type";
			e[1].data_type = 7;
			break;
		case 1:
			what = "BYTES from user space";
			e[1].data_type = PERF_JIT_CODE_DATA_BYTES;
			break;
		case 2:
			what = "size one byte short";
			e[1].data_size = size - 1;
			break;
		case 3:
			what = "zero size";
			e[1].data_size = 0;
			break;
		case 4:
			what = "line table too large";
			e[1].data = (uintptr_t)big;
			e[1].data_size = PERF_JIT_CODE_LINES_MAX + 8;
			expect = -E2BIG;
			break;
		case 5:
			what = "unwind information too large";
			e[1].data_type = PERF_JIT_CODE_DATA_UNWIND;
			e[1].data = (uintptr_t)big;
			e[1].data_size = PERF_JIT_CODE_UNWIND_MAX + 8;
			expect = -E2BIG;
			break;
		case 6:
			what = "overlapping lines";
			l->lines[3].offset = 0x08;
			break;
		case 7:
			what = "an inlined frame skipping a depth";
			l->lines[2].depth = 2;
			break;
		case 8:
			what = "an inlined frame without a function";
			l->lines[2].function = 0;
			break;
		case 9:
			what = "a line past the end of the code";
			l->lines[3].offset = 0x100;
			break;
		case 10:
			what = "a file name outside the strings";
			l->lines[0].file = l->strings_size;
			break;
		case 11:
			what = "strings without their NUL";
			((char *)&l->lines[l->nr_lines])[l->strings_size - 1] = 'x';
			break;
		case 12:
			what = "a payload that cannot be read";
			e[1].data = 8;
			expect = -EFAULT;
			break;
		case 13:
			what = "data fields on a LOAD";
			e[0].data_size = 8;
			break;
		case 14:
			what = "a name on a DATA entry";
			e[1].name = (uintptr_t)"x";
			break;
		case 15:
			what = "unwind information of an unknown format";
			unwind.hdr.format = 9;
			e[1].data_type = PERF_JIT_CODE_DATA_UNWIND;
			e[1].data = (uintptr_t)&unwind;
			e[1].data_size = sizeof(unwind);
			break;
		case 16:
			what = "an .eh_frame_hdr that leaves no .eh_frame";
			unwind.hdr.format = PERF_JIT_CODE_UNWIND_EH_FRAME;
			unwind.hdr.eh_frame_hdr_size = sizeof(unwind.bytes);
			e[1].data_type = PERF_JIT_CODE_DATA_UNWIND;
			e[1].data = (uintptr_t)&unwind;
			e[1].data_size = sizeof(unwind);
			break;
		default:
			what = NULL;
			break;
		}
		if (!what)
			break;

		args_init(&args, e, 2);
		ret = jit_prctl(&args);
		if (i == 13) {
			/* The LOAD itself is bad: nothing is consumed. */
			EXPECT_EQ(-EINVAL, ret) TH_LOG("%s", what);
		} else {
			/* The LOAD goes, the DATA entry is refused next. */
			EXPECT_EQ(1, ret) TH_LOG("%s", what);
			args.entries += sizeof(e[0]);
			args.nr_entries = 1;
			EXPECT_EQ(expect, jit_prctl(&args)) TH_LOG("%s", what);
		}
		/* Undo this case's change to the line table. */
		free(lines);
		lines = make_lines(0, &size);
		ASSERT_NE(NULL, lines);
		l = lines;
	}
	drain_all(_metadata, self->evs, self->recs);
	EXPECT_EQ(0, records_count(&self->recs[0], PERF_RECORD_JIT_CODE_DATA));
	EXPECT_EQ(0, records_count(&self->recs[1], PERF_RECORD_JIT_CODE_DATA));
	EXPECT_EQ(0, count_data(&self->recs[2], PERF_JIT_CODE_DATA_LINES));
	free(big);
	free(lines);
}

/* The data bits need attr.jit_code. */
TEST(attr_needs_jit_code)
{
	struct perf_event_attr attr;
	int fd;

	if (!jit_code_supported())
		SKIP(return, "the kernel has no PR_PERF_JIT_CODE");
	attr_init(&attr, false);
	attr.jit_code_bytes = 1;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0 && perf_unavailable(-errno))
		SKIP(return, "perf_event_open() not allowed here");
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(EINVAL, errno);
	attr.jit_code_bytes = 0;
	attr.jit_code_data = 1;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(EINVAL, errno);
}

/*
 * A replay of another process's load carries that process's bytes: the
 * child changes its copy of the code after fork, and the replay must
 * give the child's bytes, not the parent's, marked as synthesized.
 */
TEST(replay_bytes)
{
	size_t len = 20000;
	unsigned char *code = make_code(len, 1), *got;
	struct perf_jit_code_entry e;
	struct perf_jit_code_args args;
	struct records recs = { 0 };
	struct ev ev = { .fd = -1 };
	int ready[2], release[2];
	const char *why = NULL;
	unsigned int pieces;
	__u32 got_len;
	pid_t child;
	char c;
	int ret;

	if (!jit_code_supported())
		SKIP(return, "the kernel has no PR_PERF_JIT_CODE");
	ASSERT_NE(NULL, code);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(release));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		size_t i;

		for (i = 0; i < len; i++)
			code[i] ^= 0x5a;
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		if (read(release[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));

	ret = open_data_listener(&ev, false, true, BIG_PAGES);
	if (perf_unavailable(ret)) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		SKIP(return, "perf_event_open() not allowed here");
	}
	ASSERT_EQ(0, ret);
	entry_load(&e, (uintptr_t)code, len, 77, "Child.code");
	args_init(&args, &e, 1);
	args.pid = child;
	EXPECT_EQ(1, jit_call_all(ev.fd, &args));
	ASSERT_EQ(0, ev_drain(&ev, &recs));
	EXPECT_EQ(1, write(release[1], "g", 1));
	EXPECT_EQ(0, wait_exit(child));

	got = gather(&recs, PERF_JIT_CODE_DATA_BYTES, (uintptr_t)code, child,
		     PERF_JIT_CODE_FLAGS_SYNTHESIZED, &got_len, &pieces, &why);
	ASSERT_NE(NULL, got) TH_LOG("%s", why);
	EXPECT_EQ(len, got_len);
	if (got_len == len) {
		size_t i, wrong = 0;

		for (i = 0; i < len; i++)
			wrong += got[i] != (code[i] ^ 0x5a);
		EXPECT_EQ(0, wrong);
	}
	free(got);
	records_free(&recs);
	ev_close(&ev);
	munmap(code, len);
}

/*
 * Naming a process the caller may not read fails as a whole, also in a
 * call of DATA entries that the event did not ask for, which would write
 * nothing: an unprivileged child, with an event that takes no data,
 * about its root parent.
 */
TEST(replay_data_permission)
{
	struct perf_jit_code_entry e;
	struct perf_jit_code_args args;
	struct records recs = { 0 };
	struct ev ev = { .fd = -1 };
	void *lines;
	__u32 size;
	pid_t parent = getpid(), child;
	int ret;

	if (!jit_code_supported())
		SKIP(return, "the kernel has no PR_PERF_JIT_CODE");
	if (geteuid() != 0)
		SKIP(return, "needs root to drop to an unprivileged user");
	ret = open_data_listener(&ev, false, false, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open() not allowed here");
	ASSERT_EQ(0, ret);
	lines = make_lines(0, &size);
	ASSERT_NE(NULL, lines);
	entry_data(&e, CODE_BASE, 0x100, 9, PERF_JIT_CODE_DATA_LINES,
		   lines, size);

	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		if (drop_to_nobody())
			_exit(KSFT_SKIP);
		args_init(&args, &e, 1);
		args.pid = parent;
		EXPECT_EQ(-EACCES, jit_ioctl(ev.fd, &args));
		/* About itself, the entry is consumed and writes nothing. */
		args.pid = 0;
		EXPECT_EQ(1, jit_ioctl(ev.fd, &args));
		_exit(_metadata->exit_code);
	}
	ret = wait_exit(child);
	if (ret == KSFT_SKIP)
		SKIP(return, "cannot drop privileges");
	ASSERT_EQ(0, ret);

	ASSERT_EQ(0, ev_drain(&ev, &recs));
	EXPECT_EQ(0, records_count(&recs, PERF_RECORD_JIT_CODE));
	EXPECT_EQ(0, records_count(&recs, PERF_RECORD_JIT_CODE_DATA));
	records_free(&recs);
	ev_close(&ev);
	free(lines);
}

TEST_HARNESS_MAIN
