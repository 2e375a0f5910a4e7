// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Incremental parsers for what a runtime writes: perf-map lines and
 * jitdump records, fed in whatever pieces the runtime's calls produce.
 * Each complete line or code record is forwarded at once; code bytes and
 * debug or unwinding information are skipped by size, never copied.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"

/* The jitdump format, from tools/perf/util/jitdump.h. */
#define JITHEADER_MAGIC		0x4A695444	/* "JiTD" */
#define JITHEADER_MAGIC_SW	0x4454694A
#define JITHEADER_SIZE		40		/* struct jitheader */
#define JR_PREFIX_SIZE		16		/* struct jr_prefix */
#define JR_CODE_LOAD_SIZE	56		/* struct jr_code_load */
#define JR_CODE_MOVE_SIZE	64		/* struct jr_code_move */

enum jit_record_type {
	JIT_CODE_LOAD		= 0,
	JIT_CODE_MOVE		= 1,
	JIT_CODE_DEBUG_INFO	= 2,
	JIT_CODE_CLOSE		= 3,
	JIT_CODE_UNWINDING_INFO	= 4,
};

/* Offsets in the records (jr_code_load, jr_code_move). */
#define JR_ID			0
#define JR_TOTAL_SIZE		4
#define JR_LOAD_CODE_ADDR	32
#define JR_LOAD_CODE_SIZE	40
#define JR_MOVE_OLD_ADDR	32
#define JR_MOVE_NEW_ADDR	40
#define JH_MAGIC		0
#define JH_TOTAL_SIZE		8

enum br_jit_state {
	BR_JIT_HEADER,		/* collecting the file header */
	BR_JIT_PREFIX,		/* collecting a record prefix */
	BR_JIT_HEAD,		/* collecting a LOAD or MOVE record's head */
	BR_JIT_NAME,		/* collecting a LOAD record's name */
	BR_JIT_SKIP,		/* skipping the rest of a record */
	BR_JIT_DONE,		/* after JIT_CODE_CLOSE */
};

void br_parser_init(struct br_parser *p, enum br_kind kind, char *buf)
{
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->buf = buf;
	if (kind == BR_JITDUMP) {
		p->state = BR_JIT_HEADER;
		p->want = JITHEADER_SIZE;
	}
}

void br_parser_copy(struct br_parser *dst, const struct br_parser *src)
{
	char *buf = dst->buf;

	*dst = *src;
	dst->buf = buf;
	memcpy(dst->buf, src->buf, src->len);
}

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * An entry the kernel does not take (-EINVAL: a range past the end of
 * user space) is skipped, and the stream says so; any other error stops
 * it.
 */
static int br_refused(struct br_parser *p, int err)
{
	if (err != -EINVAL)
		return err;
	p->refused = true;
	return 0;
}

/*
 * One entry as the runtime described it. Input the library would refuse
 * (no name, no length, a range that wraps) is skipped, as perf skips
 * such lines; a name is cut at a NUL and at BR_NAME_MAX bytes.
 */
static int br_emit_load(struct br_parser *p, const char *name,
			size_t name_len, uint64_t addr, uint64_t len)
{
	const char *nul = memchr(name, '\0', name_len);

	if (nul)
		name_len = nul - name;
	if (name_len > BR_NAME_MAX)
		name_len = BR_NAME_MAX;
	if (!name_len || !len || addr + len < addr)
		return 0;
	return br_refused(p, br_ranges_load(p->kind, name, name_len, addr,
					     len));
}

static bool br_ishex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

/*
 * A hex field as perf reads it (strtoull base 16: "0x" and leading zeros
 * are fine), followed by exactly one space. The line ends in '\n' or
 * '\0', so strtoull() stops inside it.
 */
static const char *br_hex_field(const char *p, const char *end, uint64_t *v)
{
	char *e;

	if (p >= end || !br_ishex(*p))
		return NULL;
	errno = 0;
	*v = strtoull(p, &e, 16);
	if (errno || e >= end || *e != ' ')
		return NULL;
	return e + 1;
}

/* "START SIZE name": the name is the rest of the line, spaces and all. */
static int br_perfmap_line(struct br_parser *p, const char *line, size_t len)
{
	const char *end = line + len, *name;
	uint64_t addr, size;

	name = br_hex_field(line, end, &addr);
	if (name)
		name = br_hex_field(name, end, &size);
	if (!name)
		return 0;
	return br_emit_load(p, name, end - name, addr, size);
}

static void br_line_append(struct br_parser *p, const char *data, size_t n)
{
	size_t room = BR_LINE_MAX - p->len;

	if (n > room) {
		n = room;
		p->cut = true;
	}
	memcpy(p->buf + p->len, data, n);
	p->len += n;
}

static int br_perfmap_feed(struct br_parser *p, const char *data, size_t n)
{
	int err = 0;

	while (n) {
		const char *nl = memchr(data, '\n', n);
		size_t part = nl ? (size_t)(nl - data) : n;

		if (!nl) {
			br_line_append(p, data, part);
			return 0;
		}
		if (!p->len && !p->cut) {
			/* A whole line in this piece: parse it in place. */
			err = br_perfmap_line(p, data, part);
		} else {
			br_line_append(p, data, part);
			p->buf[p->len] = '\n';
			err = br_perfmap_line(p, p->buf, p->len);
			p->len = 0;
			p->cut = false;
		}
		if (err)
			return err;
		data += part + 1;
		n -= part + 1;
	}
	return 0;
}

/* The record whose prefix is in rec: go on with its body, or skip it. */
static int br_jit_prefix(struct br_parser *p)
{
	uint32_t id = rd32(p->rec + JR_ID);
	uint32_t total = rd32(p->rec + JR_TOTAL_SIZE);

	/* Without a sane size the records that follow cannot be found. */
	if (total < JR_PREFIX_SIZE)
		return -EBADMSG;
	p->left = total - JR_PREFIX_SIZE;
	p->state = BR_JIT_SKIP;
	switch (id) {
	case JIT_CODE_LOAD:
		if (total >= JR_CODE_LOAD_SIZE) {
			p->state = BR_JIT_HEAD;
			p->want = JR_CODE_LOAD_SIZE;
		}
		break;
	case JIT_CODE_MOVE:
		if (total >= JR_CODE_MOVE_SIZE) {
			p->state = BR_JIT_HEAD;
			p->want = JR_CODE_MOVE_SIZE;
		}
		break;
	case JIT_CODE_CLOSE:
		p->state = BR_JIT_DONE;
		break;
	default:
		/* DEBUG_INFO, UNWINDING_INFO and ids yet to come. */
		break;
	}
	return 0;
}

static void br_jit_next(struct br_parser *p)
{
	p->have = 0;
	if (p->left) {
		p->state = BR_JIT_SKIP;
	} else {
		p->state = BR_JIT_PREFIX;
		p->want = JR_PREFIX_SIZE;
	}
}

static int br_jitdump_feed(struct br_parser *p, const unsigned char *data,
			   size_t n)
{
	int err = 0;
	size_t c;

	while (n && !err) {
		switch (p->state) {
		case BR_JIT_HEADER:
		case BR_JIT_PREFIX:
		case BR_JIT_HEAD:
			c = p->want - p->have;
			if (c > n)
				c = n;
			memcpy(p->rec + p->have, data, c);
			p->have += c;
			if (p->state != BR_JIT_HEADER && p->state != BR_JIT_PREFIX)
				p->left -= c;
			data += c;
			n -= c;
			if (p->have < p->want)
				break;
			if (p->state == BR_JIT_HEADER) {
				uint32_t magic = rd32(p->rec + JH_MAGIC);
				uint32_t total = rd32(p->rec + JH_TOTAL_SIZE);

				if (magic == JITHEADER_MAGIC_SW)
					return -EPROTONOSUPPORT;
				if (magic != JITHEADER_MAGIC ||
				    total < JITHEADER_SIZE)
					return -EBADMSG;
				p->left = total - JITHEADER_SIZE;
				br_jit_next(p);
			} else if (p->state == BR_JIT_PREFIX) {
				err = br_jit_prefix(p);
				if (!err && p->state == BR_JIT_SKIP)
					br_jit_next(p);
			} else if (rd32(p->rec + JR_ID) == JIT_CODE_LOAD) {
				/* A LOAD without a name has nothing to forward. */
				p->len = 0;
				if (p->left)
					p->state = BR_JIT_NAME;
				else
					br_jit_next(p);
			} else {
				uint64_t old = rd64(p->rec + JR_MOVE_OLD_ADDR);
				uint64_t new = rd64(p->rec + JR_MOVE_NEW_ADDR);

				err = br_refused(p, br_ranges_move(old, new));
				br_jit_next(p);
			}
			break;
		case BR_JIT_NAME: {
			const unsigned char *nul;
			size_t keep;

			c = n < p->left ? n : p->left;
			nul = memchr(data, '\0', c);
			if (nul)
				c = nul - data + 1;
			keep = nul ? c - 1 : c;
			if (keep > BR_NAME_MAX - p->len)
				keep = BR_NAME_MAX - p->len;
			memcpy(p->buf + p->len, data, keep);
			p->len += keep;
			p->left -= c;
			data += c;
			n -= c;
			if (!nul && p->left)
				break;
			/* The name is complete: the code bytes follow. */
			err = br_emit_load(p, p->buf, p->len,
					   rd64(p->rec + JR_LOAD_CODE_ADDR),
					   rd64(p->rec + JR_LOAD_CODE_SIZE));
			p->len = 0;
			br_jit_next(p);
			break;
		}
		case BR_JIT_SKIP:
			c = n < p->left ? n : p->left;
			p->left -= c;
			data += c;
			n -= c;
			if (!p->left)
				br_jit_next(p);
			break;
		case BR_JIT_DONE:
		default:
			return 0;
		}
	}
	return err;
}

/*
 * Feed @len bytes the runtime wrote. Returns 0, or a negative errno when
 * the stream cannot be followed any more or forwarding failed.
 */
int br_parse(struct br_stream *s, const void *data, size_t len)
{
	struct br_parser *p = &s->parser;

	if (p->kind == BR_PERFMAP)
		return br_perfmap_feed(p, data, len);
	if (p->kind == BR_JITDUMP)
		return br_jitdump_feed(p, data, len);
	return 0;
}
