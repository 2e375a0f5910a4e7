// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_parse: libFuzzer over the bridge's parsers (perf-map lines,
 * jitdump records) and its live ranges, built with AddressSanitizer.
 *
 * An input is one byte of settings, then what a runtime writes to its
 * file. Bit 0 of the settings picks the format, the rest seeds where the
 * writes are cut. The bytes go to the parser twice: whole, then in
 * pieces of 1 to 64 bytes. Besides no crash, no leak and bounded memory
 * (ASan, libFuzzer's -rss_limit_mb), the live code that libperfinject's
 * registry holds must be the same both times: a runtime's writes can be
 * cut anywhere, and the bridge must not care where.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfinject/perfinject.h>

#include "bridge.h"

/* Messages would drown the fuzzer's; the stream's own are not linked. */
void br_say(const char *fmt, ...)
{
	(void)fmt;
}

struct snap {
	struct perfinject_code *v;
	size_t nr, cap;
};

static int snap_add(const struct perfinject_code *c, void *ctx)
{
	struct snap *s = ctx;

	if (s->nr == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			abort();
	}
	s->v[s->nr] = *c;
	s->v[s->nr].name = strdup(c->name);
	if (!s->v[s->nr].name)
		abort();
	s->nr++;
	return 0;
}

static int by_addr(const void *a, const void *b)
{
	const struct perfinject_code *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void snap_take(struct snap *s)
{
	uint64_t desc = (uint64_t)(uintptr_t)perfinject_registry__descriptor();
	int n;

	s->nr = 0;
	n = perfinject_registry__read_pid(getpid(), desc, snap_add, s);
	if (n < 0 || (size_t)n != s->nr) {
		fprintf(stderr, "fuzz_parse: reading the registry: %d\n", n);
		abort();
	}
	qsort(s->v, s->nr, sizeof(*s->v), by_addr);
}

static void snap_clear(struct snap *s)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		free((char *)s->v[i].name);
	s->nr = 0;
}

/*
 * Start from nothing live: the ranges are dropped as in a forked child,
 * and the next load (this one, of a range no input can reach) makes them
 * so.
 */
static void reset(void)
{
	br_ranges_atfork_child();
	if (br_ranges_load(BR_PERFMAP, "reset", 5, 0x10, 0x10, NULL))
		abort();
}

static uint32_t next(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* Feed @len bytes whole, or cut by @seed; stop where the parser gives up. */
static void feed(struct br_stream *s, enum br_kind kind, const uint8_t *data,
		 size_t len, uint32_t seed)
{
	size_t at = 0, n;

	br_parser_release(&s->parser);
	br_parser_init(&s->parser, kind, s->parser.buf);
	while (at < len) {
		n = seed ? 1 + next(&seed) % 64 : len;
		if (n > len - at)
			n = len - at;
		if (br_parse(s, data + at, n))
			break;
		at += n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct br_stream s;
	static struct snap whole, cut;
	enum br_kind kind;
	uint32_t seed;
	size_t i;

	if (!size)
		return 0;
	if (!s.parser.buf) {
		s.parser.buf = malloc(BR_LINE_MAX + 1);
		if (!s.parser.buf)
			abort();
	}
	kind = data[0] & 1 ? BR_JITDUMP : BR_PERFMAP;
	seed = 0x9e3779b9u ^ (data[0] >> 1);
	data++;
	size--;

	reset();
	feed(&s, kind, data, size, 0);
	snap_take(&whole);
	reset();
	feed(&s, kind, data, size, seed);
	snap_take(&cut);

	if (whole.nr != cut.nr) {
		fprintf(stderr, "fuzz_parse: %zu entries fed whole, %zu in pieces\n",
			whole.nr, cut.nr);
		abort();
	}
	for (i = 0; i < whole.nr; i++) {
		if (!by_addr(&whole.v[i], &cut.v[i]))
			continue;
		fprintf(stderr, "fuzz_parse: entry %zu: %#llx %llu '%s' whole, %#llx %llu '%s' in pieces\n",
			i, (unsigned long long)whole.v[i].addr,
			(unsigned long long)whole.v[i].len, whole.v[i].name,
			(unsigned long long)cut.v[i].addr,
			(unsigned long long)cut.v[i].len, cut.v[i].name);
		abort();
	}
	snap_clear(&whole);
	snap_clear(&cut);
	return 0;
}
