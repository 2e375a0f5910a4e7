// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The jitdump parser's forwarding of DEBUG_INFO and UNWINDING_INFO: a
 * jitdump written as runtimes write it (the records before their LOAD,
 * entries out of order, repeated file names as "\xff", a terminating
 * entry past the code, Erlang's function head before it, V8's addresses
 * 0x40 past theirs, padding) is fed whole, in random pieces, and
 * through a checkpoint taken and restored at random points, as the
 * stream code does. Each LOAD must reach br_ranges_load() with exactly
 * the line table and unwind information written for it, and the LOADs
 * with nothing for them with nothing. br_ranges_load() is this file's,
 * which records what it is given.
 *
 *   parse_data
 *
 * One "  PASS  name" or "  FAIL  name" line per test; exit 0 when all
 * passed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfinject/perfinject.h>

#include "bridge.h"

void br_say(const char *fmt, ...)
{
	(void)fmt;
}

/* What br_ranges_load() was given, one LOAD. */
struct got_row {
	uint64_t addr;
	char file[64];
	uint32_t line, discrim;
};

struct got {
	char name[64];
	uint64_t addr, len;
	size_t nr_lines;
	struct got_row rows[8];
	unsigned char eh[64], hdr[64];
	size_t eh_sz, hdr_sz;
	bool data;
};

static struct got got[16];
static size_t nr_got;
/* A name whose load with data is refused, as a kernel would (EINVAL). */
static const char *refuse_data = "refused";

int br_ranges_load(enum br_kind kind, const char *name, size_t name_len,
		   uint64_t addr, uint64_t len, const struct br_load_data *data)
{
	struct got *g;
	size_t i;

	(void)kind;
	if (data && name_len == strlen(refuse_data) &&
	    !memcmp(name, refuse_data, name_len))
		return -EINVAL;
	if (nr_got == sizeof(got) / sizeof(got[0]))
		abort();
	g = &got[nr_got++];
	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%.*s", (int)name_len, name);
	g->addr = addr;
	g->len = len;
	if (!data)
		return 0;
	g->data = true;
	g->nr_lines = data->nr_lines;
	for (i = 0; i < data->nr_lines && i < 8; i++) {
		const struct perfinject_line *l = &data->lines[i];

		if (l->nr_frames != 1 || l->frames[0].function ||
		    l->frames[0].column)
			abort();
		g->rows[i].addr = l->addr;
		snprintf(g->rows[i].file, sizeof(g->rows[i].file), "%s",
			 l->frames[0].file);
		g->rows[i].line = l->frames[0].line;
		g->rows[i].discrim = l->discrim;
	}
	if (data->eh_frame_sz > sizeof(g->eh) ||
	    data->eh_frame_hdr_sz > sizeof(g->hdr))
		abort();
	g->eh_sz = data->eh_frame_sz;
	g->hdr_sz = data->eh_frame_hdr_sz;
	if (g->eh_sz)
		memcpy(g->eh, data->eh_frame, g->eh_sz);
	if (g->hdr_sz)
		memcpy(g->hdr, data->eh_frame_hdr, g->hdr_sz);
	return 0;
}

int br_ranges_move(uint64_t old_addr, uint64_t new_addr)
{
	(void)old_addr;
	(void)new_addr;
	return 0;
}

/* The jitdump being written. */
static unsigned char *dump;
static size_t dump_len, dump_cap;

static void put(const void *p, size_t n)
{
	if (dump_len + n > dump_cap) {
		dump_cap = 2 * (dump_len + n);
		dump = realloc(dump, dump_cap);
		if (!dump)
			abort();
	}
	memcpy(dump + dump_len, p, n);
	dump_len += n;
}

static void put32(uint32_t v)
{
	put(&v, 4);
}

static void put64(uint64_t v)
{
	put(&v, 8);
}

static void prefix(uint32_t id, size_t total)
{
	static uint64_t stamp = 100;

	put32(id);
	put32(total);
	put64(stamp++);
}

static void pad8(size_t start)
{
	static const unsigned char zero[8];

	put(zero, (8 - (dump_len - start) % 8) % 8);
}

struct entry {
	uint64_t addr;
	int32_t line, discrim;
	const char *file;	/* NULL: "\xff", the previous one's */
	size_t file_len;	/* 0: strlen(file); else bytes, NUL included */
};

static size_t entry_name_len(const struct entry *e)
{
	return !e->file ? 2 : e->file_len ? e->file_len : strlen(e->file) + 1;
}

static void debug_info(uint64_t code_addr, const struct entry *e, size_t nr)
{
	size_t start = dump_len, i, total = 16 + 16;

	for (i = 0; i < nr; i++)
		total += 16 + entry_name_len(&e[i]);
	total = (total + 7) & ~(size_t)7;
	prefix(2, total);
	put64(code_addr);
	put64(nr);
	for (i = 0; i < nr; i++) {
		put64(e[i].addr);
		put32(e[i].line);
		put32(e[i].discrim);
		if (e[i].file)
			put(e[i].file, entry_name_len(&e[i]));
		else
			put("\xff", 2);
	}
	pad8(start);
}

/* The eh_frame, then the eh_frame_hdr, as V8 lays them out. */
static const unsigned char eh[24] = {
	0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 0x10, 1,
	0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0,
};
static const unsigned char hdr[12] = {
	1, 0x1b, 3, 0x3b, 0xe4, 0xff, 0xff, 0xff, 0, 0, 0, 0,
};

static void unwinding_info(size_t hdr_sz)
{
	size_t start = dump_len;
	size_t size = sizeof(eh) + hdr_sz;

	prefix(4, (16 + 24 + size + 7) & ~(size_t)7);
	put64(size);
	put64(hdr_sz);
	put64(size);
	put(eh, sizeof(eh));
	put(hdr, hdr_sz);
	pad8(start);
}

static void load(uint64_t addr, uint64_t len, const char *name)
{
	static const unsigned char code[5] = { 0x55, 0xff, 0, 0x0a, 0xc3 };
	size_t nl = strlen(name) + 1;

	prefix(0, 16 + 40 + nl + sizeof(code));
	put32(4242);
	put32(4243);
	put64(addr);
	put64(addr);
	put64(len);
	put64(1);
	put(name, nl);
	put(code, sizeof(code));
}

/* What each LOAD must bring, and the jitdump that says it. */
#define A	0x7f0000001000ULL

static void write_dump(void)
{
	static const struct entry a[] = {
		{ A + 0x20, 12, 3, "/app/y.js" },
		{ A + 0x00, 10, 1, "/app/y.js" },
		{ A + 0x10, 11, 0, NULL },		/* same file */
		{ A + 0x30, 0, 0, "" },			/* no file: left out */
		{ A + 0x40, 13, 0, "/app/z.js" },
		{ A + 0x20, 15, 2, "/app/y.js" },	/* the last counts */
		{ A + 0x50, 0, 0, "/app/z.js" },	/* the end: left out */
	};
	/* Erlang: the function head before the code, an empty last entry. */
	static const struct entry f[] = {
		{ 0xb000 - 0x36, 83, 0, "lists.erl" },
		{ 0xb000 + 0x25, 84, 0, "lists.erl" },
		{ 0xb000 + 0x70, 0, 0, "" },
	};
	/* V8: every address 0x40 past the code, columns as discriminators. */
	static const struct entry g[] = {
		{ 0xc000 + 0x40, 5, 7, "node:path" },
		{ 0xc000 + 0x50, 6, 9, NULL },
		{ 0xc000 + 0x60, 7, 3, NULL },		/* the end: left out */
	};
	/*
	 * V8 11: the script's name from a freed buffer, its first 16 bytes
	 * the allocator's (a NUL among them); the rest is right.
	 */
	static const char freed[] = "\xab\xca\x6b\x25\0\0\0\0\xb6\x0c\xe6\xc0\x77\x91\x80\x78"
				    "e/tests/runtimes/hot.js";
	static const struct entry h[] = {
		{ 0xd000 + 0x40, 18, 18, freed, sizeof(freed) },
		{ 0xd000 + 0x70, 19, 12, freed, sizeof(freed) },
	};
	/* Not a name: the table goes, the name stays. */
	static const struct entry bad[] = {
		{ 0xe000, 1, 0, "/app/ok.js" },
		{ 0xe008, 2, 0, "/app/\x85\xca.js" },
	};
	static const struct entry c[] = {
		{ 0x5000, 1, 0, "/app/c.js" },
	};
	static const struct entry r[] = {
		{ 0x9000, 7, 0, "/app/r.js" },
	};
	static const struct entry e[] = {
		{ 0xa000, 7, 0, "/app/r.js" },
	};
	const struct entry big = { 0x6000, 1, 0, NULL };
	struct entry *many;
	size_t i, n = (BR_DATA_MAX + 4096) / 18 + 1;

	dump_len = 0;
	put32(0x4A695444);
	put32(1);
	put32(48);		/* a header longer than perf's 40 bytes */
	put32(62);
	put32(0);
	put32(4242);
	put64(1);
	put64(0);
	put64(0);
	/* A: lines and unwind information, in the order V8 writes them. */
	debug_info(A, a, sizeof(a) / sizeof(a[0]));
	unwinding_info(sizeof(hdr));
	load(A, 0x50, "A");
	/* B: nothing of A's is left for it. */
	load(0x2000, 0x10, "B");
	/* C: lines for other code; an eh_frame without its header. */
	debug_info(0x1234, c, 1);
	unwinding_info(0);
	load(0x5000, 0x10, "C");
	/* D: a DEBUG_INFO over BR_DATA_MAX is skipped, whole. */
	many = calloc(n, sizeof(*many));
	if (!many)
		abort();
	for (i = 0; i < n; i++)
		many[i] = big;
	many[0].file = "/app/d.js";
	debug_info(0x6000, many, n);
	free(many);
	load(0x6000, 0x10, "D");
	/* A kernel that refuses the data still gets the name. */
	debug_info(0x9000, r, 1);
	load(0x9000, 0x10, "refused");
	/* E: after a MOVE, the records before a LOAD still count. */
	debug_info(0xa000, e, 1);
	prefix(1, 16 + 48);
	put32(4242);
	put32(4243);
	put64(0xa000);
	put64(0x9000);
	put64(0xb000);
	put64(0x10);
	put64(1);
	load(0xa000, 0x10, "E");
	debug_info(0xb000, f, sizeof(f) / sizeof(f[0]));
	load(0xb000, 0x70, "lists:keyfind/3");
	debug_info(0xc000, g, sizeof(g) / sizeof(g[0]));
	load(0xc000, 0x20, "JS:^isPosixPathSeparator node:path:71:30");
	debug_info(0xd000, h, sizeof(h) / sizeof(h[0]));
	load(0xd000, 0x100, "JS:*hotAlpha /work/main/bridge/tests/runtimes/hot.js:18:18");
	debug_info(0xe000, bad, sizeof(bad) / sizeof(bad[0]));
	load(0xe000, 0x10, "bad name");
	/* Entries that end before their record does: no table either. */
	{
		size_t start = dump_len;

		prefix(2, 16 + 16 + 16 + 12 + 12);
		put64(0xf000);
		put64(1);
		put64(0xf000);
		put32(3);
		put32(0);
		put("/app/f.js\0\0\0", 12);
		put("/app/g.js\0\0\0", 12);
		pad8(start);
	}
	load(0xf000, 0x10, "trailing");
}

static int failures, exit_code;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("        %s:%d: %s: ", __FILE__, __LINE__, \
			       #cond);					\
			printf(__VA_ARGS__);				\
			putchar('\n');					\
			failures++;					\
		}							\
	} while (0)

static const struct got *find(const char *name)
{
	size_t i;

	for (i = 0; i < nr_got; i++)
		if (!strcmp(got[i].name, name))
			return &got[i];
	return NULL;
}

static void rows_are(const struct got *g, const char *what,
		     const struct got_row *want, size_t nr)
{
	size_t i;

	CHECK(g && g->data && g->nr_lines == nr, "%s: %s", what,
	      !g ? "missing" : !g->data ? "no data" : "rows");
	for (i = 0; g && g->data && i < nr && i < g->nr_lines; i++)
		CHECK(g->rows[i].addr == want[i].addr &&
		      !strcmp(g->rows[i].file, want[i].file) &&
		      g->rows[i].line == want[i].line &&
		      g->rows[i].discrim == want[i].discrim,
		      "%s: row %zu is %#llx %s:%u (%u)", what, i,
		      (unsigned long long)g->rows[i].addr, g->rows[i].file,
		      g->rows[i].line, g->rows[i].discrim);
}

static void verify(void)
{
	static const struct got_row want[] = {
		{ A + 0x00, "/app/y.js", 10, 1 },
		{ A + 0x10, "/app/y.js", 11, 0 },
		{ A + 0x20, "/app/y.js", 15, 2 },
		{ A + 0x40, "/app/z.js", 13, 0 },
	};
	static const struct got_row want_f[] = {
		{ 0xb000, "lists.erl", 83, 0 },
		{ 0xb025, "lists.erl", 84, 0 },
	};
	static const struct got_row want_g[] = {
		{ 0xc000, "node:path", 5, 7 },
		{ 0xc010, "node:path", 6, 9 },
	};
	static const struct got_row want_h[] = {
		{ 0xd000, "/work/main/bridge/tests/runtimes/hot.js", 18, 18 },
		{ 0xd030, "/work/main/bridge/tests/runtimes/hot.js", 19, 12 },
	};
	const struct got *g;
	size_t i;

	CHECK(nr_got == 11, "%zu loads forwarded, want 11", nr_got);
	g = find("A");
	CHECK(g && g->data, "A: no data");
	if (g && g->data) {
		CHECK(g->addr == A && g->len == 0x50, "A: range");
		CHECK(g->nr_lines == 4, "A: %zu rows, want 4", g->nr_lines);
		for (i = 0; i < 4 && i < g->nr_lines; i++)
			CHECK(g->rows[i].addr == want[i].addr &&
			      !strcmp(g->rows[i].file, want[i].file) &&
			      g->rows[i].line == want[i].line &&
			      g->rows[i].discrim == want[i].discrim,
			      "A: row %zu is %#llx %s:%u (%u)", i,
			      (unsigned long long)g->rows[i].addr,
			      g->rows[i].file, g->rows[i].line,
			      g->rows[i].discrim);
		CHECK(g->eh_sz == sizeof(eh) && !memcmp(g->eh, eh, sizeof(eh)),
		      "A: eh_frame of %zu bytes", g->eh_sz);
		CHECK(g->hdr_sz == sizeof(hdr) &&
		      !memcmp(g->hdr, hdr, sizeof(hdr)),
		      "A: eh_frame_hdr of %zu bytes", g->hdr_sz);
	}
	g = find("B");
	CHECK(g && !g->data, "B: %s", g ? "has data" : "missing");
	g = find("C");
	CHECK(g && !g->data, "C: %s", g ? "has data" : "missing");
	g = find("D");
	CHECK(g && !g->data, "D: %s", g ? "has data" : "missing");
	g = find("refused");
	CHECK(g && !g->data, "refused: %s",
	      g ? "has data" : "not forwarded without its data");
	rows_are(find("lists:keyfind/3"), "lists:keyfind/3", want_f, 2);
	rows_are(find("JS:^isPosixPathSeparator node:path:71:30"), "V8's",
		 want_g, 2);
	rows_are(find("JS:*hotAlpha /work/main/bridge/tests/runtimes/hot.js:18:18"),
		 "V8 11's", want_h, 2);
	g = find("bad name");
	CHECK(g && !g->data, "bad name: %s", g ? "has data" : "missing");
	g = find("trailing");
	CHECK(g && !g->data, "trailing: %s", g ? "has data" : "missing");
	g = find("E");
	CHECK(g && g->data && g->nr_lines == 1 &&
	      !strcmp(g->rows[0].file, "/app/r.js") && g->rows[0].line == 7,
	      "E: %s", g ? "wrong lines" : "missing");
}

static uint32_t next(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/*
 * Feed the dump in pieces of 1 to @max bytes (0: whole). With @ckpt,
 * copy the parser to a checkpoint at random points and go on from the
 * copy, as the stream code does when it reads bytes back.
 */
static void run(const char *name, uint32_t seed, size_t max, bool ckpt)
{
	static char buf[2][BR_LINE_MAX + 1];
	struct br_stream s;
	struct br_parser saved;
	size_t at = 0, n;
	int err = 0;

	memset(&s, 0, sizeof(s));
	memset(&saved, 0, sizeof(saved));
	br_parser_init(&s.parser, BR_JITDUMP, buf[0]);
	br_parser_init(&saved, BR_JITDUMP, buf[1]);
	nr_got = 0;
	failures = 0;
	while (at < dump_len && !err) {
		n = max ? 1 + next(&seed) % max : dump_len;
		if (n > dump_len - at)
			n = dump_len - at;
		err = br_parse(&s, dump + at, n);
		at += n;
		if (ckpt && next(&seed) % 3 == 0) {
			br_parser_copy(&saved, &s.parser);
			br_parser_release(&s.parser);
			br_parser_init(&s.parser, BR_JITDUMP, buf[0]);
			br_parser_copy(&s.parser, &saved);
		}
	}
	CHECK(!err, "br_parse: %d", err);
	verify();
	br_parser_release(&s.parser);
	br_parser_release(&saved);
	printf("  %s  parse-data/%s\n", failures ? "FAIL" : "PASS", name);
	if (failures)
		exit_code = 1;
}

int main(void)
{
	write_dump();
	run("whole", 1, 0, false);
	run("pieces", 2463534242u, 64, false);
	run("bytes", 88172645u, 1, false);
	run("checkpoints", 521288629u, 97, true);
	free(dump);
	return exit_code;
}
