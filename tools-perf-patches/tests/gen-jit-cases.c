// SPDX-License-Identifier: GPL-2.0
/*
 * gen-jit-cases: write small perf.data files with PERF_RECORD_JIT_CODE
 * records, well formed and hostile, in the host's byte order and in the
 * other one, to test how perf reads them.
 *
 * Usage: gen-jit-cases [-p PID] DIR [CASE...]
 *        gen-jit-cases -l
 *
 * For each case (all of them by default) it writes
 *
 *   DIR/CASE.data          perf.data in the host's byte order
 *   DIR/CASE.swapped.data  the same file as a machine of the other byte
 *                          order writes it (big-endian on x86)
 *   DIR/CASE.expect        what perf should make of it, one line each,
 *                          fields separated by a tab:
 *                            sample IP SYM [DSO]
 *                                           a sample, in time order, and
 *                                           the symbol perf script must
 *                                           name it by ("-": any); DSO,
 *                                           if there, the dso it must
 *                                           show: "jit" for "[JIT] tid
 *                                           N", "heap" for the code
 *                                           heap's mapping, or a path
 *                            warn TEXT      text expected on stderr
 *                            nowarn TEXT    text that must not be there
 *                            show TEXT      text expected in the output
 *                                           of perf script
 *                                           --show-jit-code-events
 *                            slow           a case of many records
 *                            srcline IP TEXT
 *                                           the source line perf script
 *                                           -F ip,srcline gives the
 *                                           sample at IP
 *
 * The files are laid out as tools/perf/Documentation/
 * perf.data-file-format.txt says and as bench/gen-perf-data.c writes them:
 * one cpu-clock:u attr with sample_type IP|TID|TIME|PERIOD and
 * sample_id_all, feature sections, and data: COMM and MMAP2 records of
 * a fake process, an MMAP2 of an anonymous code heap, then the records of
 * the case and samples in and around the code.
 *
 * Every field is written through put*(), which also notes the field's
 * width, so the swapped file has each field in the other byte order at
 * its own width, as the other machine would write it: u32 pairs stay in
 * place (perf swaps samples and sample_id as u64 words and then undoes it
 * for u32 pairs), strings and names are bytes, and the attr bitfield
 * word has the bits of each byte reversed, which is what
 * perf_event__attr_swap() undoes.
 *
 * Build with the patched UAPI header, e.g. the one tools/perf uses:
 *   cc -O2 -Wall -Wextra -Werror -I<linux-tools>/tools/include/uapi \
 *      -o gen-jit-cases gen-jit-cases.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <linux/perf_event.h>

#ifndef PERF_JIT_CODE_FLAGS_SYNTHESIZED
#error "needs <linux/perf_event.h> with PERF_RECORD_JIT_CODE: -I<patched uapi>"
#endif

typedef uint64_t u64;
typedef uint32_t u32;
typedef uint16_t u16;
typedef uint8_t u8;

#define PERF_MAGIC			0x32454c4946524550ULL	/* "PERFILE2" */
#define PERF_RECORD_FINISHED_ROUND	68
#define NAME_ALIGN			64

enum {
	HEADER_HOSTNAME		= 3,
	HEADER_OSRELEASE	= 4,
	HEADER_VERSION		= 5,
	HEADER_ARCH		= 6,
	HEADER_NRCPUS		= 7,
	HEADER_CMDLINE		= 11,
	HEADER_EVENT_DESC	= 12,
	HEADER_SAMPLE_TIME	= 21,
	HEADER_CLOCKID		= 23,
	HEADER_FEAT_BITS	= 256,
};

#define FILE_HEADER_SIZE	(3 * 8 + 3 * 16 + HEADER_FEAT_BITS / 8)
#define JIT_FIXED_SIZE		56	/* struct perf_record_jit_code */
#define SAMPLE_ID_SIZE		16	/* pid, tid, time */

#define ALIGN8(x)	(((x) + 7) & ~(u64)7)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define HEAP		0x7f3a40000000ULL	/* the anonymous code heap */
#define HEAP_LEN	0x10000000ULL
#define EXE		0x555555554000ULL
#define SAMPLE_PERIOD	250000
#define T0		5000000000000ULL

#define LOAD		PERF_JIT_CODE_LOAD
#define UNLOAD		PERF_JIT_CODE_UNLOAD
#define MOVE		PERF_JIT_CODE_MOVE
#define FLUSH		4	/* PERF_JIT_CODE_FLUSH */

/* --- a file image that knows the width of each field ---------------- */

enum kind { RAW, U16 = 2, U32 = 4, U64 = 8, BITS64 };

static struct {
	u8	*b;
	u8	*k;	/* kind of the field that starts at each byte */
	size_t	len;
	size_t	cap;
} img;

static u32 pid = 4242;
static u64 t;		/* time of the next record */
static FILE *expect;

static __attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "gen-jit-cases: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	exit(1);
}

static void put_at(size_t off, const void *p, size_t n, enum kind kind)
{
	if (off + n > img.cap) {
		size_t cap = img.cap ? img.cap : 1 << 16;

		while (off + n > cap)
			cap *= 2;
		img.b = realloc(img.b, cap);
		img.k = realloc(img.k, cap);
		if (!img.b || !img.k)
			die("out of memory\n");
		img.cap = cap;
	}
	memcpy(img.b + off, p, n);
	memset(img.k + off, RAW, n);
	if (n)
		img.k[off] = kind;
	if (off + n > img.len)
		img.len = off + n;
}

static void put(const void *p, size_t n, enum kind kind)
{
	put_at(img.len, p, n, kind);
}

static void put16(u16 v) { put(&v, sizeof(v), U16); }
static void put32(u32 v) { put(&v, sizeof(v), U32); }
static void put64(u64 v) { put(&v, sizeof(v), U64); }
static void put_bytes(const void *p, size_t n) { put(p, n, RAW); }

static void put_zero(size_t n)
{
	static const u8 zero[NAME_ALIGN];

	while (n) {
		size_t m = n < sizeof(zero) ? n : sizeof(zero);

		put_bytes(zero, m);
		n -= m;
	}
}

static u8 revbyte(u8 b)
{
	u8 r = 0;
	int i;

	for (i = 0; i < 8; i++)
		if (b & (1 << i))
			r |= 0x80 >> i;
	return r;
}

/* Each field in the other byte order, as the other machine writes it. */
static void swap_image(void)
{
	size_t i = 0, j;
	u8 tmp;

	while (i < img.len) {
		switch (img.k[i]) {
		case U16:
		case U32:
		case U64:
			for (j = 0; j < img.k[i] / 2u; j++) {
				tmp = img.b[i + j];
				img.b[i + j] = img.b[i + img.k[i] - 1 - j];
				img.b[i + img.k[i] - 1 - j] = tmp;
			}
			i += img.k[i];
			break;
		case BITS64:
			/* bit-fields are allocated from the other end */
			for (j = 0; j < 8; j++)
				img.b[i + j] = revbyte(img.b[i + j]);
			i += 8;
			break;
		default:
			i++;
		}
	}
}

static void write_image(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die("%s: %s\n", path, strerror(errno));
	if (fwrite(img.b, img.len, 1, f) != 1 || fclose(f))
		die("%s: write: %s\n", path, strerror(errno));
}

/* --- header, attr, features ------------------------------------------- */

static struct perf_event_attr attr;

static void put_attr(void)
{
	size_t start = img.len;

	/* bytes first, then the width of each field, as the ABI has them */
	put_bytes(&attr, sizeof(attr));
#define FIELD(f, kind) (img.k[start + offsetof(struct perf_event_attr, f)] = (kind))
	FIELD(type, U32);
	FIELD(size, U32);
	FIELD(config, U64);
	FIELD(sample_period, U64);
	FIELD(sample_type, U64);
	FIELD(read_format, U64);
	img.k[start + offsetof(struct perf_event_attr, read_format) + 8] = BITS64;
	FIELD(wakeup_events, U32);
	FIELD(bp_type, U32);
	FIELD(config1, U64);
	FIELD(config2, U64);
	FIELD(branch_sample_type, U64);
	FIELD(sample_regs_user, U64);
	FIELD(sample_stack_user, U32);
	FIELD(clockid, U32);
	FIELD(sample_regs_intr, U64);
	FIELD(aux_watermark, U32);
	FIELD(sample_max_stack, U16);
	FIELD(aux_sample_size, U32);
	FIELD(aux_action, U32);
	FIELD(sig_data, U64);
	FIELD(config3, U64);
#undef FIELD
}

static void put_string(const char *s)
{
	u32 len = strlen(s) + 1;
	u32 olen = (len + NAME_ALIGN - 1) & ~(NAME_ALIGN - 1);

	put32(olen);
	put_bytes(s, len);
	put_zero(olen - len);
}

static void put_feature(int feat, u64 first_sample, u64 last_sample)
{
	struct utsname uts;

	if (uname(&uts))
		die("uname: %s\n", strerror(errno));

	switch (feat) {
	case HEADER_HOSTNAME:
		put_string("gen-jit-cases");
		break;
	case HEADER_OSRELEASE:
		put_string(uts.release);
		break;
	case HEADER_VERSION:
		put_string("gen-jit-cases 1");
		break;
	case HEADER_ARCH:
		put_string(uts.machine);
		break;
	case HEADER_NRCPUS:
		put32(1);	/* available */
		put32(1);	/* online */
		break;
	case HEADER_CMDLINE:
		put32(2);
		put_string("gen-jit-cases");
		put_string("DIR");
		break;
	case HEADER_EVENT_DESC:
		put32(1);
		put32(sizeof(attr));
		put_attr();
		put32(0);	/* no ids: one event */
		put_string("cpu-clock:u");
		break;
	case HEADER_SAMPLE_TIME:
		put64(first_sample);
		put64(last_sample);
		break;
	case HEADER_CLOCKID:
		put64(1);	/* resolution, ns */
		break;
	}
}

/* The data section is at data_offset; features go after it. */
static void put_header(size_t data_offset, u64 first_sample, u64 last_sample)
{
	static const int feats[] = {
		HEADER_HOSTNAME, HEADER_OSRELEASE, HEADER_VERSION, HEADER_ARCH,
		HEADER_NRCPUS, HEADER_CMDLINE, HEADER_EVENT_DESC,
		HEADER_SAMPLE_TIME, HEADER_CLOCKID,
	};
	u64 features[HEADER_FEAT_BITS / 64] = { 0 };
	size_t data_end = img.len, table = img.len, off;
	size_t attr_size = sizeof(attr) + 16;
	u64 v;
	unsigned int i;

	put_zero(ARRAY_SIZE(feats) * 16);
	for (i = 0; i < ARRAY_SIZE(feats); i++) {
		u64 start = img.len, size;

		put_feature(feats[i], first_sample, last_sample);
		size = img.len - start;
		put_at(table + 16 * i, &start, 8, U64);
		put_at(table + 16 * i + 8, &size, 8, U64);
		features[feats[i] / 64] |= 1ULL << (feats[i] % 64);
	}

	off = 0;
#define PUT64_AT(val) do { v = (val); put_at(off, &v, 8, U64); off += 8; } while (0)
	PUT64_AT(PERF_MAGIC);
	PUT64_AT(FILE_HEADER_SIZE);
	PUT64_AT(attr_size);
	PUT64_AT(FILE_HEADER_SIZE);		/* attrs */
	PUT64_AT(attr_size);
	PUT64_AT(data_offset);			/* data */
	PUT64_AT(data_end - data_offset);
	PUT64_AT(0);				/* event_types */
	PUT64_AT(0);
	for (i = 0; i < ARRAY_SIZE(features); i++)
		PUT64_AT(features[i]);
#undef PUT64_AT
}

/* --- records ----------------------------------------------------------- */

static void put_event_header(u32 type, u16 misc, u16 size)
{
	put32(type);
	put16(misc);
	put16(size);
}

static void put_sample_id(u64 time)
{
	put32(pid);
	put32(pid + 1);
	put64(time);
}

static void comm(const char *name)
{
	char c[16] = "";

	snprintf(c, sizeof(c), "%s", name);
	put_event_header(PERF_RECORD_COMM,
			 PERF_RECORD_MISC_USER | PERF_RECORD_MISC_COMM_EXEC,
			 8 + 8 + sizeof(c) + SAMPLE_ID_SIZE);
	put32(pid);
	put32(pid);
	put_bytes(c, sizeof(c));
	put_sample_id(t++);
}

static void mmap2(u64 addr, u64 len, u32 prot, u32 flags, const char *file)
{
	size_t fn_size = ALIGN8(strlen(file) + 1);

	put_event_header(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
			 8 + 8 + 3 * 8 + 2 * 4 + 2 * 8 + 2 * 4 + fn_size +
			 SAMPLE_ID_SIZE);
	put32(pid);
	put32(pid);
	put64(addr);
	put64(len);
	put64(0);	/* pgoff */
	put32(0);	/* maj */
	put32(0);	/* min */
	put64(0);	/* ino */
	put64(0);	/* ino_generation */
	put32(prot);
	put32(flags);
	put_bytes(file, strlen(file));
	put_zero(fn_size - strlen(file));
	put_sample_id(t++);
}

static u64 first_sample, last_sample;

static void round_end(void)
{
	put_event_header(PERF_RECORD_FINISHED_ROUND, 0, 8);
}

static void sample_in(u64 ip, const char *sym, const char *dso);

/* A sample at ip, which perf script must name sym ("-": whatever). */
static void sample(u64 ip, const char *sym)
{
	sample_in(ip, sym, NULL);
}

/* The same, in a dso ("jit", "heap" or a path) if not NULL. */
static void sample_in(u64 ip, const char *sym, const char *dso)
{
	put_event_header(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 8 + 4 * 8);
	put64(ip);
	put32(pid);
	put32(pid + 1);
	put64(t);
	put64(SAMPLE_PERIOD);
	if (!first_sample)
		first_sample = t;
	last_sample = t++;
	fprintf(expect, "sample\t%llx\t%s%s%s\n", (unsigned long long)ip, sym,
		dso ? "\t" : "", dso ? dso : "");
}

/* pid forks child: a process of its own, with a copy of the memory. */
static void fork_to(u32 child)
{
	put_event_header(PERF_RECORD_FORK, PERF_RECORD_MISC_USER,
			 8 + 4 * 4 + 8 + SAMPLE_ID_SIZE);
	put32(child);
	put32(pid);
	put32(child);
	put32(pid);
	put64(t);
	put_sample_id(t++);
}

static void expect_line(const char *what, const char *fmt, ...)
{
	va_list ap;

	fprintf(expect, "%s\t", what);
	va_start(ap, fmt);
	vfprintf(expect, fmt, ap);
	va_end(ap);
	fprintf(expect, "\n");
}

/*
 * Any JIT_CODE record: fixed is how much of the 48 bytes after the
 * header to write, name/name_len the bytes after them, then sample_id
 * if with_id, and size, if not 0, the header.size to claim.
 */
static void jit_raw(u32 op, u32 flags, u64 addr, u64 len, u64 new_addr,
		    u64 index, size_t fixed, const void *name, size_t name_len,
		    bool with_id, size_t size)
{
	const u32 f32[] = { pid, pid + 1, op, flags };
	const u64 f64[] = { addr, len, new_addr, index };
	size_t n = 8 + fixed + name_len + (with_id ? SAMPLE_ID_SIZE : 0);
	unsigned int i;

	if (!size)
		size = n;
	if (size > 0xffff)
		die("record of %zu bytes\n", size);
	put_event_header(PERF_RECORD_JIT_CODE, PERF_RECORD_MISC_USER, size);
	for (i = 0; i < 4 && 4 * (i + 1) <= fixed; i++)
		put32(f32[i]);
	for (i = 0; i < 4 && 16 + 8 * (i + 1) <= fixed; i++)
		put64(f64[i]);
	put_bytes(name, name_len);
	if (with_id)
		put_sample_id(t++);
}

static u32 jit_flags;

/* A well formed JIT_CODE record, as the kernel writes it. */
static void jit(u32 op, u64 addr, u64 len, u64 new_addr, u64 index,
		const char *name)
{
	size_t name_size = name ? ALIGN8(strlen(name) + 1) : 0;
	char *buf = calloc(1, name_size + 1);

	if (!buf)
		die("out of memory\n");
	if (name)
		memcpy(buf, name, strlen(name));
	jit_raw(op, jit_flags, addr, len, new_addr, index, 48, buf, name_size,
		true, 0);
	free(buf);
}

static void load(u64 addr, u64 len, u64 index, const char *name)
{
	jit(LOAD, addr, len, 0, index, name);
}

/* A record of a profiler's replay of the registry (PERF_EVENT_IOC_JIT_CODE). */
static void replay(u32 op, u64 addr, u64 len, u64 index, const char *name)
{
	jit_flags = PERF_JIT_CODE_FLAGS_SYNTHESIZED;
	jit(op, addr, len, 0, index, name);
	jit_flags = 0;
}

/*
 * A PERF_RECORD_JIT_CODE_DATA of a line table, whole in one record, as
 * the kernel writes it: struct perf_jit_code_lines, its rows and its
 * strings, in the writer's byte order, field by field.
 */
struct row {
	u32 offset, line, column, depth, file, function;
};

static void jit_lines(u64 addr, u64 index, const struct row *rows, u32 nr,
		      const char *strings, u32 strings_size)
{
	u32 size = 8 + nr * 24 + strings_size;
	u32 i;

	put_event_header(PERF_RECORD_JIT_CODE_DATA, PERF_RECORD_MISC_USER,
			 8 + 48 + ALIGN8(size) + SAMPLE_ID_SIZE);
	put32(pid);
	put32(pid + 1);
	put32(PERF_JIT_CODE_DATA_LINES);
	put32(0);
	put64(addr);
	put64(index);
	put32(0);		/* offset */
	put32(size);
	put32(size);		/* total */
	put32(0);
	put32(nr);
	put32(strings_size);
	for (i = 0; i < nr; i++) {
		put32(rows[i].offset);
		put32(rows[i].line);
		put32(rows[i].column);
		put32(rows[i].depth);
		put32(rows[i].file);
		put32(rows[i].function);
	}
	put_bytes(strings, strings_size);
	put_zero(ALIGN8(size) - size);
	put_sample_id(t++);
}

/* --- the cases ----------------------------------------------------------- */

#define A	(HEAP + 0x1000)		/* a function before the bad record */
#define B	(HEAP + 0x2000)		/* the bad record's range */
#define C	(HEAP + 0x3000)		/* a function after the bad record */
#define FN_LEN	0x100

/* A good function at A before and one at C after a bad record. */
static void before(void)
{
	load(A, FN_LEN, 1, "jit::before");
	sample(A + 0x10, "jit::before");
}

/* bsym: what is at B after the bad record */
static void after_b(const char *bsym)
{
	sample(A + 0x20, "jit::before");
	sample(B + 0x10, bsym);
	load(C, FN_LEN, 3, "jit::after");
	sample(C + 0x30, "jit::after");
	sample(A + FN_LEN - 1, "jit::before");
	sample(C, "jit::after");
}

static void after(void)
{
	after_b("[unknown]");
}

static void malformed(const char *why)
{
	expect_line("warn", "Malformed PERF_RECORD_JIT_CODE (%s), skipping", why);
}

static void case_valid(void)
{
	/* every field of the record matters, in either byte order */
	replay(LOAD, A, 0x40, 0x0123456789abcdefULL, "jit::Interp::eval_7");
	load(A + 0x40, 0xc0, 2, "jit::Parser::parse");
	sample(A, "jit::Interp::eval_7");
	sample(A + 0x3f, "jit::Interp::eval_7");
	sample(A + 0x40, "jit::Parser::parse");
	sample(A + 0xff, "jit::Parser::parse");
	sample(A + 0x100, "[unknown]");
	sample(EXE + 0x1234, "[unknown]");
	/* reuse of an address */
	jit(UNLOAD, A, 0x40, 0, 0x0123456789abcdefULL, NULL);
	sample(A + 0x10, "[unknown]");
	load(A, 0x40, 3, "jit::Vec::push");
	sample(A + 0x10, "jit::Vec::push");
	sample(A + 0x50, "jit::Parser::parse");
	/* a move */
	load(B, 0x80, 4, "jit::Map::lookup");
	sample(B + 0x7f, "jit::Map::lookup");
	jit(MOVE, B, 0x80, C + 0x800, 4, NULL);
	sample(B + 0x10, "[unknown]");
	sample(C + 0x800, "jit::Map::lookup");
	sample(C + 0x87f, "jit::Map::lookup");
	sample(C + 0x880, "[unknown]");
	/* plain UTF-8 is printed as it is */
	load(C, 0x20, 5, "jit::h\xc3\xa9llo_\xe2\x82\xac");
	sample(C + 0x1f, "jit::h\xc3\xa9llo_\xe2\x82\xac");
	expect_line("nowarn", "PERF_RECORD_JIT_CODE");
	expect_line("nowarn", "JIT code");
	expect_line("show", "PERF_RECORD_JIT_CODE %u/%u: LOAD [%#llx(0x40)] index %llu flags 0x1: jit::Interp::eval_7",
		    pid, pid + 1, (unsigned long long)A, 0x0123456789abcdefULL);
	expect_line("show", "PERF_RECORD_JIT_CODE %u/%u: MOVE [%#llx(0x80)] index 4 flags 0 to %#llx",
		    pid, pid + 1, (unsigned long long)B,
		    (unsigned long long)C + 0x800);
}

static void case_short(void)
{
	before();
	/* header, pid, tid, op, flags, then sample_id: no range, no name */
	jit_raw(LOAD, 0, B, FN_LEN, 0, 2, 16, NULL, 0, true, 0);
	after();
	malformed("record too short");
	expect_line("show", "malformed: record too short");
}

static void case_header_only(void)
{
	before();
	jit_raw(LOAD, 0, B, FN_LEN, 0, 2, 0, NULL, 0, false, 0);
	after();
	malformed("record too short");
}

static void case_name_unterminated(void)
{
	char name[40];

	/* no NUL anywhere in the record: the name runs into its end */
	memset(name, 'A', sizeof(name));
	before();
	jit_raw(LOAD, 0, B, FN_LEN, 0, 2, 48, name, sizeof(name), false, 0);
	after();
	malformed("name not terminated");
}

static void case_name_into_sample_id(void)
{
	char name[16];

	/*
	 * No NUL in the name's own bytes: it would run into the sample_id
	 * after it, which has zero bytes.
	 */
	memset(name, 'B', sizeof(name));
	before();
	jit_raw(LOAD, 0, B, FN_LEN, 0, 2, 48, name, sizeof(name), true, 0);
	after();
	malformed("name not terminated");
}

static void case_empty_name(void)
{
	before();
	jit(LOAD, B, FN_LEN, 0, 2, "");
	after();
	malformed("empty name");
}

static char *huge(size_t len, char c, const char *prefix)
{
	char *s = malloc(len + 1);

	if (!s)
		die("out of memory\n");
	memset(s, c, len);
	memcpy(s, prefix, strlen(prefix));
	s[len] = '\0';
	return s;
}

/* The longest name that fits: header.size is a u16, a multiple of 8. */
#define HUGE_NAME_LEN	(0xfff8 - 8 - 48 - SAMPLE_ID_SIZE - 1)

/*
 * The kernel takes names of at most PERF_JIT_CODE_NAME_MAX bytes with
 * the NUL: a longer one is malformed. Made printable, a name may grow 4
 * times, and perf report cuts what is wider than 65535 columns.
 */
static void too_long(const char *name)
{
	before();
	load(B, FN_LEN, 2, name);
	after();
	malformed("name too long");
}

static void case_huge_name(void)
{
	char *name = huge(HUGE_NAME_LEN, 'x', "jit::huge_");

	too_long(name);
	free(name);
}

static void case_huge_escaped_name(void)
{
	char *name = huge(60000, '\x1b', "jit::esc_");

	too_long(name);
	free(name);
}

static void case_long_name(void)
{
	char *name = huge(PERF_JIT_CODE_NAME_MAX, 'y', "jit::long_");

	too_long(name);
	free(name);
}

/* The longest name the kernel takes, of ESC, UTF-8 and ASCII. */
static void case_max_name(void)
{
	const size_t len = PERF_JIT_CODE_NAME_MAX - 1;
	char *name = huge(len, 'z', "jit::max_");
	char *want = malloc(4 * len + 1), *w;
	size_t i;

	if (!want)
		die("out of memory\n");
	for (i = 9; i + 3 <= len; i += 3)
		memcpy(name + i, "\x1b\xc3\xa9", 3);	/* ESC, e acute */
	w = want + sprintf(want, "jit::max_");
	for (i = 9; i < len; i++) {
		if (name[i] == '\x1b')
			w += sprintf(w, "\\x1b");
		else
			*w++ = name[i];
	}
	*w = '\0';
	before();
	load(B, FN_LEN, 2, name);
	sample(B + 0x10, want);
	after_b(want);
	expect_line("nowarn", "PERF_RECORD_JIT_CODE");
	free(name);
	free(want);
}

static void case_op0(void)
{
	before();
	jit(0, B, FN_LEN, 0, 2, "jit::op0");
	after();
	malformed("unknown operation");
	expect_line("show", "UNKNOWN [%#llx(%#x)] index 2 flags 0 malformed: unknown operation",
		    (unsigned long long)B, FN_LEN);
}

static void case_op99(void)
{
	before();
	jit(99, B, FN_LEN, 0, 2, "jit::op99");
	after();
	malformed("unknown operation");
}

static void case_len0(void)
{
	before();
	load(B, 0, 2, "jit::len0");
	after();
	malformed("bad range");
}

static void case_wrap(void)
{
	before();
	load(0xfffffffffffff000ULL, 0x2000, 2, "jit::wrap");
	after();
	sample(0xfffffffffffff010ULL, "-");
	sample(0x10, "-");
	malformed("bad range");
}

static void case_wrap_to_zero(void)
{
	before();
	/* [addr, 2^64): the end is 0 */
	load(0xfffffffffffff000ULL, 0x1000, 2, "jit::wrap0");
	after();
	malformed("bad range");
}

static void case_overlap(void)
{
	before();
	load(B, 0x100, 2, "jit::first");
	sample(B + 0x90, "jit::first");
	/* a newer load over part of the older one wins there */
	load(B + 0x80, 0x100, 4, "jit::second");
	sample(B + 0x10, "jit::first");
	sample(B + 0x7f, "jit::first");
	sample(B + 0x80, "jit::second");
	sample(B + 0xff, "jit::second");
	sample(B + 0x17f, "jit::second");
	/* and its unload leaves the rest of the older one */
	jit(UNLOAD, B + 0x80, 0x100, 0, 4, NULL);
	sample(B + 0x10, "jit::first");
	sample(B + 0x90, "[unknown]");
	load(C, FN_LEN, 3, "jit::after");
	sample(C + 0x30, "jit::after");
	sample(A + 0x20, "jit::before");
	expect_line("nowarn", "PERF_RECORD_JIT_CODE");
	expect_line("nowarn", "JIT code");
}

static void case_unload_unknown(void)
{
	before();
	jit(UNLOAD, B, FN_LEN, 0, 2, NULL);
	after();
	expect_line("warn", "Unload of unknown JIT code at %#llx, skipping",
		    (unsigned long long)B);
	expect_line("nowarn", "Malformed");
}

static void case_move_unknown(void)
{
	before();
	jit(MOVE, B, FN_LEN, B + 0x8000, 2, NULL);
	after();
	sample(B + 0x8010, "[unknown]");
	expect_line("warn", "Move of unknown JIT code at %#llx, skipping",
		    (unsigned long long)B);
	expect_line("nowarn", "Malformed");
}

static void case_move_self(void)
{
	before();
	load(B, FN_LEN, 2, "jit::self");
	sample(B + 0x10, "jit::self");
	jit(MOVE, B, FN_LEN, B, 2, NULL);
	sample(B + 0x10, "jit::self");
	/* and by half its length onto itself */
	jit(MOVE, B, FN_LEN, B + FN_LEN / 2, 2, NULL);
	sample(B + 0x10, "[unknown]");
	sample(B + FN_LEN / 2, "jit::self");
	sample(B + FN_LEN + FN_LEN / 2 - 1, "jit::self");
	load(C, FN_LEN, 3, "jit::after");
	sample(C + 0x30, "jit::after");
	sample(A + 0x20, "jit::before");
	expect_line("nowarn", "PERF_RECORD_JIT_CODE");
	expect_line("nowarn", "JIT code");
}

static void case_move_wrap(void)
{
	before();
	load(B, FN_LEN, 2, "jit::mover");
	jit(MOVE, B, FN_LEN, 0xffffffffffffff80ULL, 2, NULL);
	after_b("jit::mover");
	malformed("bad destination range");
}

static void case_move_len(void)
{
	/*
	 * A move applies to the code loaded at addr, whatever its length,
	 * and the record's length is the code's at the destination.
	 */
	const u64 D = HEAP + 0x8000;

	before();
	load(B, FN_LEN, 2, "jit::mover");
	jit(MOVE, B, 0x10, D, 2, NULL);
	sample(B + 0x8, "[unknown]");
	sample(B + 0x80, "[unknown]");
	sample_in(D + 0x8, "jit::mover", "jit");
	sample_in(D + 0x10, "[unknown]", "heap");
	load(B + 0x9000, FN_LEN, 5, "jit::last");
	sample(B + 0x9010, "jit::last");
	sample(A + 0x30, "jit::before");
	expect_line("nowarn", "JIT code");
	expect_line("nowarn", "Malformed");
}

static void case_heap_remap(void)
{
	/* e.g. mprotect() of the code heap: a new MMAP2 over the JIT maps */
	before();
	load(B, FN_LEN, 2, "jit::remapped");
	sample(B + 0x10, "jit::remapped");
	mmap2(HEAP, HEAP_LEN, PROT_READ | PROT_EXEC,
	      MAP_PRIVATE | MAP_ANONYMOUS, "//anon");
	sample(B + 0x10, "jit::remapped");
	sample(B + 0x200, "[unknown]");
	after_b("jit::remapped");
	expect_line("nowarn", "PERF_RECORD_JIT_CODE");
	expect_line("nowarn", "JIT code");
}

static void case_exec(void)
{
	/* exec: the old program's JIT code went with its address space */
	before();
	load(B, FN_LEN, 2, "jit::old_program");
	sample(B + 0x10, "jit::old_program");
	comm("newprog");
	sample(B + 0x10, "[unknown]");
	sample(A + 0x10, "[unknown]");
	expect_line("nowarn", "PERF_RECORD_JIT_CODE");
}

/*
 * A name with a terminal escape sequence (ESC [ 2 J clears the screen),
 * newline, tab, bytes that are not UTF-8 (0xff, an overlong form, a
 * surrogate), a C1 control in UTF-8 (U+009B, CSI), DEL, a letter in UTF-8
 * that is kept, a backslash that would forge an escape, and a bidi
 * override (U+202E) that would show what follows reversed. ESC_SHOWN is
 * how perf must print it.
 */
#define ESC_NAME	"evil\x1b[2J\n\tname\xff\xc0\xaf\xc2\x9b[31m\x7f\xed\xa0\x80h\xc3\xa9" \
			"\\x41" "\xe2\x80\xae" "cba"
#define ESC_SHOWN	"evil\\x1b[2J\\x0a\\x09name\\xff\\xc0\\xaf\\xc2\\x9b[31m\\x7f" \
			"\\xed\\xa0\\x80h\xc3\xa9" "\\\\x41" "\\xe2\\x80\\xae" "cba"

static void case_escapes(void)
{
	before();
	load(B, FN_LEN, 2,
	     ESC_NAME);
	sample(B + 0x10, ESC_SHOWN);
	after_b(ESC_SHOWN);
	expect_line("show", "LOAD [%#llx(%#x)] index 2 flags 0: evil\\x1b[2J\\x0a\\x09name\\xff",
		    (unsigned long long)B, FN_LEN);
	expect_line("nowarn", "PERF_RECORD_JIT_CODE");
}

static void case_unaligned_size(void)
{
	static const char name[] = "jit::unaligned";	/* 15 bytes with NUL */

	before();
	/* the name not padded: header.size is 8 + 48 + 15 + 16 = 87 */
	jit_raw(LOAD, 0, B, FN_LEN, 0, 2, 48, name, sizeof(name), true, 0);
	after();
	expect_line("warn", "Malformed PERF_RECORD_JIT_CODE (");
}

static void case_many_unloads(void)
{
	unsigned int i;

	before();
	for (i = 0; i < 100000; i++) {
		jit(UNLOAD, B + 16 * (i % 4096), 16, 0, i, NULL);
		if (i % 1000 == 999)
			round_end();
	}
	after();
	expect_line("warn", "Unload of unknown JIT code at %#llx, skipping",
		    (unsigned long long)B);
	expect_line("slow", "");
}

/*
 * The window between a replay's snapshot and its records: live records
 * that precede the replay in time are newer than what it says of their
 * ranges. Code loaded there live stays, code unloaded there live stays
 * gone, a replay elsewhere applies, and its later correction (the
 * difference of a second snapshot) does not remove live code.
 */
static void case_replay_window(void)
{
	const u64 D = HEAP + 0x5000, E = HEAP + 0x6000;

	before();
	load(B, FN_LEN, 2, "jit::live_new");
	jit(UNLOAD, D, FN_LEN, 0, 4, NULL);	/* loaded before perf came */
	replay(LOAD, B, FN_LEN, 5, "jit::stale");
	replay(LOAD, D, FN_LEN, 4, "jit::resurrected");
	replay(LOAD, E, FN_LEN, 6, "jit::replayed");
	sample(B + 0x10, "jit::live_new");
	sample(D + 0x10, "[unknown]");
	sample(E + 0x10, "jit::replayed");
	/* the second snapshot's difference */
	replay(UNLOAD, B, FN_LEN, 5, NULL);
	replay(LOAD, B, FN_LEN, 2, "jit::live_new");
	sample(B + 0x20, "jit::live_new");
	/* a live move of replayed code carries its name; the source is free */
	jit(MOVE, E, FN_LEN, E + 0x800, 6, NULL);
	replay(LOAD, E, FN_LEN, 6, "jit::replayed");
	sample(E + 0x10, "[unknown]");
	sample(E + 0x810, "jit::replayed");
	after_b("jit::live_new");
	expect_line("warn", "Unload of unknown JIT code at %#llx, skipping",
		    (unsigned long long)D);
	expect_line("nowarn", "Malformed");
}

/* FLUSH: all code in the range is gone, and an empty range is no news. */
static void case_flush(void)
{
	before();
	load(B, FN_LEN / 2, 2, "jit::f1");
	load(B + FN_LEN / 2, FN_LEN / 2, 4, "jit::f2");
	sample(B + 0x10, "jit::f1");
	sample(B + FN_LEN / 2 + 0x10, "jit::f2");
	jit(FLUSH, B, FN_LEN, 0, 0, NULL);
	sample(B + 0x10, "[unknown]");
	sample(B + FN_LEN / 2 + 0x10, "[unknown]");
	jit(FLUSH, HEAP + 0x8000, 0x1000, 0, 0, NULL);
	after();
	expect_line("show", "PERF_RECORD_JIT_CODE %u/%u: FLUSH [%#llx(%#x)] index 0 flags 0",
		    pid, pid + 1, (unsigned long long)B, FN_LEN);
	expect_line("nowarn", "JIT code");
}

/*
 * An unload in a dense heap leaves the heap's mapping there: neither a
 * hole nor a neighbour stretched over it.
 */
static void case_dense_unload(void)
{
	load(B, FN_LEN, 2, "jit::d1");
	load(B + FN_LEN, FN_LEN, 3, "jit::d2");
	load(B + 2 * FN_LEN, FN_LEN, 4, "jit::d3");
	sample_in(B + FN_LEN + 0x10, "jit::d2", "jit");
	jit(UNLOAD, B + FN_LEN, FN_LEN, 0, 3, NULL);
	sample_in(B + FN_LEN - 1, "jit::d1", "jit");
	sample_in(B + FN_LEN, "[unknown]", "heap");
	sample_in(B + 2 * FN_LEN - 1, "[unknown]", "heap");
	sample_in(B + 2 * FN_LEN, "jit::d3", "jit");
	sample_in(HEAP + 0x10, "[unknown]", "heap");
	/* and a load in the middle of the gap splits nothing */
	load(B + FN_LEN + 0x40, 0x40, 5, "jit::small");
	sample_in(B + FN_LEN + 0x10, "[unknown]", "heap");
	sample_in(B + FN_LEN + 0x50, "jit::small", "jit");
	sample_in(B + FN_LEN + 0x90, "[unknown]", "heap");
	expect_line("nowarn", "JIT code");
}

/*
 * An unload applies to the code loaded at its address, whatever its
 * length, with all that later loads left of it; one at an address inside
 * a function is not about that function.
 */
static void case_partial_unload(void)
{
	before();
	load(B, FN_LEN, 2, "jit::whole");
	jit(UNLOAD, B, 0x10, 0, 2, NULL);
	sample(B + 0x8, "[unknown]");
	sample(B + 0x80, "[unknown]");
	load(B, FN_LEN, 5, "jit::again");
	jit(UNLOAD, B + 0x10, 0x10, 0, 5, NULL);
	sample(B + 0x18, "jit::again");
	sample(B + 0x80, "jit::again");
	load(C, FN_LEN, 3, "jit::outer");
	load(C + 0x40, 0x40, 4, "jit::inner");
	sample(C + 0x10, "jit::outer");
	sample(C + 0x50, "jit::inner");
	sample(C + 0x90, "jit::outer");
	jit(UNLOAD, C, FN_LEN, 0, 3, NULL);
	sample(C + 0x10, "[unknown]");
	sample(C + 0x50, "jit::inner");
	sample(C + 0x90, "[unknown]");
	sample(A + 0x20, "jit::before");
	expect_line("warn", "Unload of unknown JIT code at %#llx, skipping",
		    (unsigned long long)(B + 0x10));
	expect_line("nowarn", "Malformed");
}

/*
 * The range-gone operation (FLUSH) removes every piece of code that has a
 * part in its range, also the parts outside it, and nothing else.
 */
static void case_flush_overlap(void)
{
	before();
	load(B, FN_LEN, 2, "jit::straddles");
	load(C, FN_LEN, 3, "jit::outer");
	load(C + 0x40, 0x40, 4, "jit::inner");
	jit(FLUSH, B + 0x80, 0x10, 0, 0, NULL);
	sample(B + 0x10, "[unknown]");
	sample(B + 0xf0, "[unknown]");
	sample(C + 0x10, "jit::outer");
	jit(FLUSH, C + 0x90, 0x10, 0, 0, NULL);
	sample(C + 0x10, "[unknown]");
	sample(C + 0x50, "jit::inner");
	sample(C + 0x90, "[unknown]");
	sample(A + 0x20, "jit::before");
	expect_line("nowarn", "JIT code");
	expect_line("nowarn", "Malformed");
}

/*
 * A mapping that cannot run code, as under W^X while the runtime writes,
 * and a new mapping of the heap keep its code; an executable mapping of a
 * file where the heap was (the heap unmapped, a library mapped there)
 * ends the code in its range, and only there.
 */
static void case_file_later(void)
{
	const u64 FAR = HEAP + 0x100000;

	before();
	load(B, FN_LEN, 2, "jit::heap_code");
	load(FAR, FN_LEN, 4, "jit::far");
	mmap2(HEAP, HEAP_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	      "//anon");
	sample_in(B + 0x10, "jit::heap_code", "jit");
	mmap2(HEAP, HEAP_LEN, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
	      "//anon");
	sample_in(B + 0x10, "jit::heap_code", "jit");
	sample_in(B + 0x200, "[unknown]", "heap");
	mmap2(HEAP, 0x10000, PROT_READ | PROT_EXEC, MAP_PRIVATE,
	      "/opt/gen-jit-cases/lib/libmappedlater.so");
	sample_in(B + 0x10, "[unknown]", "/opt/gen-jit-cases/lib/libmappedlater.so");
	sample_in(A + 0x10, "[unknown]", "/opt/gen-jit-cases/lib/libmappedlater.so");
	sample_in(FAR + 0x10, "jit::far", "jit");
	expect_line("nowarn", "JIT code");
	expect_line("nowarn", "Malformed");
}

/*
 * A fork: the child has the parent's code, and from then on each its own:
 * a load in one is not in the other, nor an unload; an exec in the child
 * ends the child's code only.
 */
static void case_fork(void)
{
	const u32 parent = pid, child = pid + 100;

	before();
	load(B, FN_LEN, 2, "jit::inherited");
	fork_to(child);
	pid = child;
	sample_in(B + 0x10, "jit::inherited", "jit");
	load(C, FN_LEN, 3, "jit::child_only");
	sample(C + 0x10, "jit::child_only");
	sample(B + 0x20, "jit::inherited");
	pid = parent;
	sample_in(C + 0x10, "[unknown]", "heap");
	jit(UNLOAD, B, FN_LEN, 0, 2, NULL);
	sample(B + 0x10, "[unknown]");
	load(C + 0x1000, FN_LEN, 5, "jit::parent_only");
	pid = child;
	sample(B + 0x10, "jit::inherited");
	sample(C + 0x1010, "[unknown]");
	comm("newprog");
	sample(B + 0x10, "[unknown]");
	pid = parent;
	sample(A + 0x20, "jit::before");
	sample(C + 0x1010, "jit::parent_only");
	expect_line("nowarn", "JIT code");
	expect_line("nowarn", "Malformed");
}

static void case_many_live(void)
{
	const unsigned int n = 30000;
	unsigned int i;
	char name[32];

	before();
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "jit::f%u", i);
		load(C + 0x10000 + 16 * i, 16, i, name);
		if (i % 1000 == 999)
			round_end();
	}
	sample(C + 0x10000 + 16 * 1234 + 5, "jit::f1234");
	for (i = 0; i < n; i++) {
		jit(UNLOAD, C + 0x10000 + 16 * i, 16, 0, i, NULL);
		if (i % 1000 == 999)
			round_end();
	}
	sample(C + 0x10000 + 16 * 1234 + 5, "[unknown]");
	after();
	expect_line("nowarn", "PERF_RECORD_JIT_CODE");
	expect_line("slow", "");
}

/*
 * A line table, with an inlined frame: the lines of each sample, in
 * either byte order (the table is in the writer's, which perf swaps).
 */
static void case_lines(void)
{
	static const char strings[] = "\0/src/a.js\0inl\0";
	static const struct row rows[] = {
		{ 0x00, 10, 0, 0, 1, 0 },
		{ 0x20, 11, 5, 0, 1, 0 },	/* an inlined frame at 0x20 */
		{ 0x20, 70000, 2, 1, 1, 12 },
	};

	load(A, 0x40, 1, "jit::lines");
	jit_lines(A, 1, rows, 3, strings, sizeof(strings));
	sample(A + 0x4, "jit::lines");
	expect_line("srcline", "%llx\ta.js:10", (unsigned long long)A + 0x4);
	sample(A + 0x24, "jit::lines");
	expect_line("srcline", "%llx\ta.js:70000", (unsigned long long)A + 0x24);
	sample(A + 0x3f, "jit::lines");
	expect_line("srcline", "%llx\ta.js:70000", (unsigned long long)A + 0x3f);
	expect_line("nowarn", "Malformed");
	expect_line("show", "PERF_RECORD_JIT_CODE_DATA %u/%u: LINES of %#llx index 1 flags 0: bytes 0-%zu of %zu",
		    pid, pid + 1, (unsigned long long)A, 8 + 3 * 24 + sizeof(strings),
		    8 + 3 * 24 + sizeof(strings));
}

static const struct {
	const char	*name;
	void		(*fn)(void);
} cases[] = {
	{ "valid",			case_valid },
	{ "short",			case_short },
	{ "header-only",		case_header_only },
	{ "name-unterminated",		case_name_unterminated },
	{ "name-into-sample-id",	case_name_into_sample_id },
	{ "empty-name",			case_empty_name },
	{ "huge-name",			case_huge_name },
	{ "huge-escaped-name",		case_huge_escaped_name },
	{ "long-name",			case_long_name },
	{ "max-name",			case_max_name },
	{ "op0",			case_op0 },
	{ "op99",			case_op99 },
	{ "len0",			case_len0 },
	{ "wrap",			case_wrap },
	{ "wrap-to-zero",		case_wrap_to_zero },
	{ "overlap",			case_overlap },
	{ "unload-unknown",		case_unload_unknown },
	{ "move-unknown",		case_move_unknown },
	{ "move-self",			case_move_self },
	{ "move-wrap",			case_move_wrap },
	{ "move-len",			case_move_len },
	{ "heap-remap",			case_heap_remap },
	{ "exec",			case_exec },
	{ "escapes",			case_escapes },
	{ "unaligned-size",		case_unaligned_size },
	{ "many-unloads",		case_many_unloads },
	{ "many-live",			case_many_live },
	{ "replay-window",		case_replay_window },
	{ "flush",			case_flush },
	{ "dense-unload",		case_dense_unload },
	{ "partial-unload",		case_partial_unload },
	{ "flush-overlap",		case_flush_overlap },
	{ "file-later",			case_file_later },
	{ "fork",			case_fork },
	{ "lines",			case_lines },
};

static void generate(const char *dir, unsigned int c)
{
	char path[4096];
	size_t data_offset;

	img.len = 0;
	t = T0;
	first_sample = last_sample = 0;

	snprintf(path, sizeof(path), "%s/%s.expect", dir, cases[c].name);
	expect = fopen(path, "w");
	if (!expect)
		die("%s: %s\n", path, strerror(errno));

	memset(&attr, 0, sizeof(attr));
	attr.type		= PERF_TYPE_SOFTWARE;
	attr.size		= sizeof(attr);
	attr.config		= PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period	= SAMPLE_PERIOD;
	attr.sample_type	= PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				  PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	attr.disabled		= 1;
	attr.exclude_kernel	= 1;
	attr.exclude_hv		= 1;
	attr.mmap		= 1;
	attr.comm		= 1;
	attr.task		= 1;
	attr.sample_id_all	= 1;
	attr.mmap2		= 1;
	attr.comm_exec		= 1;
	attr.use_clockid	= 1;
	attr.clockid		= CLOCK_MONOTONIC;
	attr.jit_code		= 1;

	put_zero(FILE_HEADER_SIZE);
	put_attr();
	put64(0);	/* ids */
	put64(0);
	data_offset = img.len;

	comm("jitvm");
	mmap2(EXE, 0x100000, PROT_READ | PROT_EXEC, MAP_PRIVATE,
	      "/opt/gen-jit-cases/bin/jitvm");
	mmap2(HEAP, HEAP_LEN, PROT_READ | PROT_WRITE | PROT_EXEC,
	      MAP_PRIVATE | MAP_ANONYMOUS, "//anon");
	cases[c].fn();
	round_end();

	put_header(data_offset, first_sample, last_sample);
	if (fclose(expect))
		die("%s: %s\n", path, strerror(errno));

	snprintf(path, sizeof(path), "%s/%s.data", dir, cases[c].name);
	write_image(path);
	swap_image();
	snprintf(path, sizeof(path), "%s/%s.swapped.data", dir, cases[c].name);
	write_image(path);
}

int main(int argc, char **argv)
{
	unsigned int c;
	int i, opt;
	char *end;

	while ((opt = getopt(argc, argv, "lp:")) != -1) {
		switch (opt) {
		case 'l':
			for (c = 0; c < ARRAY_SIZE(cases); c++)
				printf("%s\n", cases[c].name);
			return 0;
		case 'p':
			pid = strtoul(optarg, &end, 0);
			if (!*optarg || *end || !pid || pid >= 0x7fffffff)
				die("bad pid %s\n", optarg);
			break;
		default:
			goto usage;
		}
	}
	if (optind >= argc)
		goto usage;

	if (optind + 1 == argc) {
		for (c = 0; c < ARRAY_SIZE(cases); c++)
			generate(argv[optind], c);
		return 0;
	}
	for (i = optind + 1; i < argc; i++) {
		for (c = 0; c < ARRAY_SIZE(cases); c++)
			if (!strcmp(argv[i], cases[c].name))
				break;
		if (c == ARRAY_SIZE(cases))
			die("no case %s, see -l\n", argv[i]);
		generate(argv[optind], c);
	}
	return 0;
usage:
	fprintf(stderr, "usage: gen-jit-cases [-p PID] DIR [CASE...]\n"
			"       gen-jit-cases -l\n");
	return 2;
}
