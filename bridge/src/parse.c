// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Incremental parsers for what a runtime writes: perf-map lines and
 * jitdump records, fed in whatever pieces the runtime's calls produce.
 * Each complete line or code record is forwarded at once. Code bytes
 * are skipped by size, never copied; the debug and unwinding
 * information that a jitdump writes before a LOAD is kept and forwarded
 * with it, as its line table and unwind information.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <perfinject/perfinject.h>

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
/* Offsets in the bodies, after the prefix (jr_code_debug_info, ...). */
#define JR_DEBUG_NR_ENTRY	8
#define JR_DEBUG_ENTRIES	16
#define JR_DEBUG_ENTRY_SIZE	16	/* addr, lineno, discrim; the name follows */
#define JR_UNWIND_SIZE		0
#define JR_UNWIND_HDR_SIZE	8
#define JR_UNWIND_DATA		24

enum br_jit_state {
	BR_JIT_HEADER,		/* collecting the file header */
	BR_JIT_PREFIX,		/* collecting a record prefix */
	BR_JIT_HEAD,		/* collecting a LOAD or MOVE record's head */
	BR_JIT_NAME,		/* collecting a LOAD record's name */
	BR_JIT_SKIP,		/* skipping the rest of a record */
	BR_JIT_DONE,		/* after JIT_CODE_CLOSE */
	BR_JIT_DATA,		/* keeping a DEBUG_INFO or UNWINDING_INFO body */
};

/* A parser that holds no data: br_parser_release() a used one first. */
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

void br_parser_release(struct br_parser *p)
{
	int i;

	for (i = 0; i < BR_DATA_NR; i++) {
		free(p->data[i]);
		p->data[i] = NULL;
		p->data_len[i] = 0;
		p->data_cap[i] = 0;
	}
}

/* Room for @size bytes in data[@d]; 0, or -ENOMEM. */
static int br_data_reserve(struct br_parser *p, enum br_data d, size_t size)
{
	unsigned char *n;

	if (size <= p->data_cap[d])
		return 0;
	n = realloc(p->data[d], size);
	if (!n)
		return -ENOMEM;
	p->data[d] = n;
	p->data_cap[d] = size;
	return 0;
}

/*
 * @dst becomes a copy of @src, each with its own buffers. Kept data that
 * finds no memory is dropped: the LOAD it was for goes without it.
 */
void br_parser_copy(struct br_parser *dst, const struct br_parser *src)
{
	unsigned char *data[BR_DATA_NR];
	size_t cap[BR_DATA_NR];
	char *buf = dst->buf;
	int i;

	memcpy(data, dst->data, sizeof(data));
	memcpy(cap, dst->data_cap, sizeof(cap));
	*dst = *src;
	dst->buf = buf;
	memcpy(dst->buf, src->buf, src->len);
	for (i = 0; i < BR_DATA_NR; i++) {
		size_t need = src->data_len[i];

		dst->data[i] = data[i];
		dst->data_cap[i] = cap[i];
		if (src->state == BR_JIT_DATA && src->data_at == (enum br_data)i)
			need += src->left;
		if (br_data_reserve(dst, i, need)) {
			dst->data_len[i] = 0;
			if (dst->state == BR_JIT_DATA && dst->data_at == (enum br_data)i)
				dst->state = BR_JIT_SKIP;
			continue;
		}
		if (src->data_len[i])
			memcpy(dst->data[i], src->data[i], src->data_len[i]);
	}
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
 * such lines; a name is cut at a NUL and at BR_NAME_MAX bytes. Data the
 * kernel refuses costs the entry its data, not its name.
 */
static int br_emit_load(struct br_parser *p, const char *name,
			size_t name_len, uint64_t addr, uint64_t len,
			const struct br_load_data *data)
{
	const char *nul = memchr(name, '\0', name_len);
	int err;

	if (nul)
		name_len = nul - name;
	if (name_len > BR_NAME_MAX)
		name_len = BR_NAME_MAX;
	if (!name_len || !len || addr + len < addr)
		return 0;
	err = br_ranges_load(p->kind, name, name_len, addr, len, data);
	if (err == -EINVAL && data)
		err = br_ranges_load(p->kind, name, name_len, addr, len, NULL);
	return br_refused(p, err);
}

/* Order line table rows by address, then in the order written. */
static int br_line_cmp(const void *a, const void *b)
{
	const struct perfinject_line *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->frames < y->frames ? -1 : x->frames > y->frames;
}

/*
 * V8 writes each address of its DEBUG_INFO kElfHeaderSize bytes past the
 * code (where perf inject once put the code in the ELF file it makes),
 * and names its JavaScript code "JS:<tier><function> <script>:<line>:
 * <column>". V8 11 (Node.js 20) also writes the script name of an entry
 * from a buffer it has freed, whose first 16 bytes the allocator has
 * overwritten by then: the rest, its length and its NUL are right.
 */
#define BR_V8_PREFIX		"JS:"
#define BR_V8_ELF_HEADER	(sizeof(void *) == 8 ? 0x40 : 0x34)
#define BR_V8_FREED		16

/* The script of V8's code @name, "JS:... SCRIPT:LINE:COLUMN": its length. */
static size_t br_v8_script(const char *name, size_t len, const char **script)
{
	const char *sp, *end = name + len;
	int colons = 0;

	/* Back over ":LINE:COLUMN". */
	while (end > name && colons < 2) {
		end--;
		if (*end == ':')
			colons++;
		else if (*end < '0' || *end > '9')
			return 0;
	}
	sp = memchr(name, ' ', end - name);
	if (colons < 2 || !sp || end <= sp + 1)
		return 0;
	*script = sp + 1;
	return end - sp - 1;
}

/*
 * A file name as a runtime writes it: UTF-8 with no control character,
 * @len bytes. Anything else is memory that was not a name.
 */
static bool br_name_ok(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		size_t more = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 :
			      (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : 4;

		if (c < 0x20 || c == 0x7f || more > 3 || (more && c < 0xc2) ||
		    len - i <= more)
			return false;
		for (i++; more; more--, i++)
			if ((s[i] & 0xc0) != 0x80)
				return false;
	}
	return true;
}

/*
 * The DEBUG_INFO kept for the LOAD @name of [@addr, @addr + @len), as a
 * line table of one frame a row, in @d; its rows, frames and names are
 * one block that the caller frees (NULL when there is none). Each entry
 * holds an address, a line, a discriminator (V8 writes the column
 * there) and a file name, or "\xff" for the previous entry's. An entry
 * before the code (Erlang's function head) holds from the code's start
 * on; entries past its end (a terminating one) or without a file are
 * left out; of entries at one address, the last written counts. The
 * rows are sorted by address, as perf reads the table. A record that
 * does not parse as exactly its entries, or has a name that is not one,
 * gives no line table: no lines rather than wrong ones.
 */
static void *br_jit_lines(const struct br_parser *p, const char *name,
			  size_t name_len, uint64_t addr, uint64_t len,
			  struct br_load_data *d)
{
	const unsigned char *b = p->data[BR_DATA_DEBUG];
	size_t n = p->data_len[BR_DATA_DEBUG], at = JR_DEBUG_ENTRIES;
	uint64_t nr, i, kept = 0, out, shift = 0;
	struct perfinject_frame *frames;
	struct perfinject_line *rows;
	const char *file = NULL, *script = NULL;
	char *v8_script = NULL;
	size_t script_len = 0;
	bool sorted = true;

	if (n < JR_DEBUG_ENTRIES || rd64(b) != addr)
		return NULL;
	nr = rd64(b + JR_DEBUG_NR_ENTRY);
	/* An entry takes at least its fields and a NUL. */
	if (!nr || nr > (n - JR_DEBUG_ENTRIES) / (JR_DEBUG_ENTRY_SIZE + 1))
		return NULL;
	if (name_len >= strlen(BR_V8_PREFIX) &&
	    !memcmp(name, BR_V8_PREFIX, strlen(BR_V8_PREFIX))) {
		shift = BR_V8_ELF_HEADER;
		script_len = br_v8_script(name, name_len, &script);
	}
	rows = malloc(nr * (sizeof(*rows) + sizeof(*frames)) + script_len + 1);
	if (!rows)
		return NULL;
	frames = (void *)(rows + nr);
	if (script_len > BR_V8_FREED) {
		v8_script = (char *)(frames + nr);
		memcpy(v8_script, script, script_len);
		v8_script[script_len] = '\0';
	}
	for (i = 0; i < nr; i++) {
		const unsigned char *e = b + at, *np = e + JR_DEBUG_ENTRY_SIZE;
		const unsigned char *nul;
		int32_t line, discrim;
		uint64_t where;

		if (n - at < JR_DEBUG_ENTRY_SIZE + 1)
			break;
		where = rd64(e) - shift;
		line = (int32_t)rd32(e + 8);
		discrim = (int32_t)rd32(e + 12);
		if (v8_script && n - (np - b) > script_len && !np[script_len] &&
		    !memcmp(np + BR_V8_FREED, v8_script + BR_V8_FREED,
			    script_len - BR_V8_FREED)) {
			/* The script of the code itself, whatever its head. */
			file = v8_script;
			nul = np + script_len;
		} else {
			nul = memchr(np, '\0', n - (np - b));
			if (!nul)
				break;
			if (np[0] != 0xff || nul != np + 1) {
				if (!br_name_ok(np, nul - np))
					break;
				file = (const char *)np;
			}
		}
		at = nul + 1 - b;
		if (where < addr)
			where = addr;
		if (!file || !*file || where - addr >= len)
			continue;
		frames[kept] = (struct perfinject_frame){
			.file = file,
			.line = line > 0 ? line : 0,
		};
		rows[kept] = (struct perfinject_line){
			.addr = where,
			.frames = &frames[kept],
			.nr_frames = 1,
			.discrim = discrim > 0 ? discrim : 0,
		};
		if (kept && where < rows[kept - 1].addr)
			sorted = false;
		kept++;
	}
	/* Every entry, then nothing but the zero padding to 8 bytes. */
	if (i < nr || n - at >= 8)
		kept = 0;
	for (; at < n; at++)
		if (b[at])
			kept = 0;
	if (!sorted)
		qsort(rows, kept, sizeof(*rows), br_line_cmp);
	for (i = 0, out = 0; i < kept; i++) {
		if (out && rows[out - 1].addr == rows[i].addr)
			out--;
		rows[out++] = rows[i];
	}
	if (!out) {
		free(rows);
		return NULL;
	}
	d->lines = rows;
	d->nr_lines = out;
	return rows;
}

/*
 * The UNWINDING_INFO kept for the next LOAD, in @d: its data is the
 * .eh_frame, then the .eh_frame_hdr (the last eh_frame_hdr_size bytes),
 * as perf inject --jit reads it.
 */
static void br_jit_unwind(const struct br_parser *p, struct br_load_data *d)
{
	const unsigned char *b = p->data[BR_DATA_UNWIND];
	size_t n = p->data_len[BR_DATA_UNWIND];
	uint64_t size, hdr;

	if (n < JR_UNWIND_DATA)
		return;
	size = rd64(b + JR_UNWIND_SIZE);
	hdr = rd64(b + JR_UNWIND_HDR_SIZE);
	if (size > n - JR_UNWIND_DATA || !hdr || hdr >= size)
		return;
	d->eh_frame = b + JR_UNWIND_DATA;
	d->eh_frame_sz = size - hdr;
	d->eh_frame_hdr = b + JR_UNWIND_DATA + size - hdr;
	d->eh_frame_hdr_sz = hdr;
}

/* A jitdump LOAD, with what the records before it said about it. */
static int br_jit_load(struct br_parser *p, const char *name, size_t name_len,
		       uint64_t addr, uint64_t len)
{
	struct br_load_data d = { 0 };
	void *lines;
	int err;

	lines = br_jit_lines(p, name, name_len, addr, len, &d);
	br_jit_unwind(p, &d);
	err = br_emit_load(p, name, name_len, addr, len,
			   d.nr_lines || d.eh_frame ? &d : NULL);
	free(lines);
	p->data_len[BR_DATA_DEBUG] = 0;
	p->data_len[BR_DATA_UNWIND] = 0;
	return err;
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
	return br_emit_load(p, name, end - name, addr, size, NULL);
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
	case JIT_CODE_DEBUG_INFO:
	case JIT_CODE_UNWINDING_INFO: {
		enum br_data d = id == JIT_CODE_DEBUG_INFO ? BR_DATA_DEBUG :
							      BR_DATA_UNWIND;

		/* Kept for the next LOAD, if there is room; else skipped. */
		p->data_len[d] = 0;
		if (p->left && p->left <= BR_DATA_MAX && !br_data_reserve(p, d, p->left)) {
			p->state = BR_JIT_DATA;
			p->data_at = d;
		}
		break;
	}
	default:
		/* Ids yet to come. */
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
			err = br_jit_load(p, p->buf, p->len,
					  rd64(p->rec + JR_LOAD_CODE_ADDR),
					  rd64(p->rec + JR_LOAD_CODE_SIZE));
			p->len = 0;
			br_jit_next(p);
			break;
		}
		case BR_JIT_DATA:
		case BR_JIT_SKIP:
			c = n < p->left ? n : p->left;
			if (p->state == BR_JIT_DATA) {
				enum br_data d = p->data_at;

				memcpy(p->data[d] + p->data_len[d], data, c);
				p->data_len[d] += c;
			}
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
