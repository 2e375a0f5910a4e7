// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A fake JIT runtime for libperfinject-bridge's tests. It writes perf
 * maps and jitdumps the ways V8, Mono, Erlang, CPython, QEMU and
 * wasmtime do, through every entry point the bridge hooks, keeps a model
 * of the code it has live (a new range replaces every range it overlaps,
 * as the bridge is to assume), and compares that model with its own
 * process's registry, where the bridge's copy of libperfinject keeps
 * what it was given, right after the call that completes each line or
 * record. Without the bridge it writes the same files; the driver
 * compares them.
 *
 *   fake_runtime MODE DIR [bridge]
 *   fake_runtime canon FILE
 *
 * MODE is seq, threads, reentry, selfcheck, hostile or inert; "bridge"
 * says the bridge must be loaded. canon prints a jitdump's records one
 * per line, in hex, for comparing files written by many threads. One
 * line per test on stdout; exit 0 when all passed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <perfinject/perfinject.h>

#include "fake.h"

static bool bridged;
static const struct perfinject_registry_descriptor *bridge_desc;
static const char *mode_name;
static const char *topdir;
static const char *test_name;
static int test_failures, nr_failed;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("        %s:%d: %s: ", __FILE__, __LINE__, \
			       #cond);					\
			printf(__VA_ARGS__);				\
			putchar('\n');					\
			test_failures++;				\
		}							\
	} while (0)

static void test_begin(const char *name)
{
	test_name = name;
	test_failures = 0;
}

static void test_end(void)
{
	printf("  %s  %s/%s\n", test_failures ? "FAIL" : "PASS", mode_name,
	       test_name);
	fflush(stdout);
	nr_failed += !!test_failures;
}

static const char *const w_names[W_NR] = {
	"fwrite", "fwrite-bytes", "fwrite_unlocked", "_IO_fwrite", "fputs",
	"fputs_unlocked", "_IO_fputs", "fputc", "putc", "fputc_unlocked",
	"putc_unlocked", "_IO_putc", "fprintf", "vfprintf", "_IO_vfprintf",
	"__fprintf_chk", "__vfprintf_chk", "write", "writev", "pwrite",
	"pwritev", "dprintf", "vdprintf", "__dprintf_chk", "__vdprintf_chk",
	"pwrite64", "pwritev64",
};

/* The code the fake runtime has live. */
struct entry {
	uint64_t	addr;
	uint64_t	len;
	char		*name;
};

struct model {
	struct entry	*v;
	size_t		nr, cap;
};

static void model_add(struct model *m, uint64_t addr, uint64_t len,
		      const char *name, size_t name_len)
{
	if (m->nr == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		m->v = realloc(m->v, m->cap * sizeof(*m->v));
		if (!m->v)
			abort();
	}
	m->v[m->nr++] = (struct entry){ addr, len, strndup(name, name_len) };
}

static void model_del(struct model *m, size_t i)
{
	free(m->v[i].name);
	m->v[i] = m->v[--m->nr];
}

static void model_clear(struct model *m)
{
	while (m->nr)
		model_del(m, 0);
}

static bool overlaps(const struct entry *e, uint64_t addr, uint64_t len)
{
	return e->addr < addr + len && addr < e->addr + e->len;
}

/*
 * New code at [addr, addr + len): what it overlaps is gone. The same
 * range and name again changes nothing. Names are kept to 4095 bytes;
 * code without a name or a length is no code.
 */
static void model_load(struct model *m, uint64_t addr, uint64_t len,
		       const char *name)
{
	size_t nl = strnlen(name, PERFINJECT_NAME_MAX - 1), i;

	if (!nl || !len || addr + len < addr)
		return;
	for (i = 0; i < m->nr; i++)
		if (m->v[i].addr == addr && m->v[i].len == len &&
		    strlen(m->v[i].name) == nl && !memcmp(m->v[i].name, name, nl))
			return;
	for (i = 0; i < m->nr;) {
		if (overlaps(&m->v[i], addr, len))
			model_del(m, i);
		else
			i++;
	}
	model_add(m, addr, len, name, nl);
}

static void model_move(struct model *m, uint64_t old, uint64_t new)
{
	struct entry e;
	size_t i;

	for (i = 0; i < m->nr && m->v[i].addr != old; i++)
		;
	if (i == m->nr || old == new || new + m->v[i].len < new)
		return;
	e = m->v[i];
	m->v[i] = m->v[--m->nr];
	for (i = 0; i < m->nr;) {
		if (overlaps(&m->v[i], new, e.len))
			model_del(m, i);
		else
			i++;
	}
	model_add(m, new, e.len, e.name, strlen(e.name));
	free(e.name);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int reg_add(const struct perfinject_code *c, void *ctx)
{
	model_add(ctx, c->addr, c->len, c->name, strlen(c->name));
	return 0;
}

static int registry_read(pid_t pid, struct model *got)
{
	int n = perfinject_registry__read_pid(pid, (uintptr_t)bridge_desc,
					      reg_add, got);

	return n < 0 ? n : 0;
}

/* The registry of @pid holds exactly @m: else say how it differs. */
static void expect_pid(pid_t pid, struct model *m, const char *what)
{
	struct model got = { 0 };
	size_t i;
	int err;

	if (!bridged)
		return;
	err = registry_read(pid, &got);
	if (err) {
		CHECK(!err, "%s: reading the registry: %s", what,
		      strerror(-err));
		return;
	}
	qsort(got.v, got.nr, sizeof(*got.v), entry_cmp);
	qsort(m->v, m->nr, sizeof(*m->v), entry_cmp);
	for (i = 0; i < got.nr && i < m->nr; i++)
		if (entry_cmp(&got.v[i], &m->v[i]))
			break;
	CHECK(i == got.nr && i == m->nr,
	      "after %s: registry has %zu entries, the runtime %zu; at %zu: registry %#llx+%#llx '%.60s', runtime %#llx+%#llx '%.60s'",
	      what, got.nr, m->nr, i,
	      i < got.nr ? (unsigned long long)got.v[i].addr : 0ULL,
	      i < got.nr ? (unsigned long long)got.v[i].len : 0ULL,
	      i < got.nr ? got.v[i].name : "-",
	      i < m->nr ? (unsigned long long)m->v[i].addr : 0ULL,
	      i < m->nr ? (unsigned long long)m->v[i].len : 0ULL,
	      i < m->nr ? m->v[i].name : "-");
	model_clear(&got);
	free(got.v);
}

#define EXPECT(m, what)	expect_pid(getpid(), m, what)

static uint64_t registry_changes(void)
{
	return bridged ? __atomic_load_n(&bridge_desc->changes,
					 __ATOMIC_ACQUIRE) : 0;
}

/* DIR/@sub/@base, with %d in @base the pid; the directory is made. */
static char *path_of(const char *sub, const char *base, pid_t pid)
{
	static char path[PATH_MAX];
	size_t len;

	snprintf(path, sizeof(path), "%s/%s", topdir, sub);
	mkdir(path, 0755);
	len = strlen(path);
	snprintf(path + len, sizeof(path) - len, "/");
	len++;
	snprintf(path + len, sizeof(path) - len, base, pid);
	return path;
}

/* An fd of the directory DIR/@sub, opened where no hook looks. */
static int dir_of(const char *sub)
{
	char *p = path_of(sub, "x", 0);

	*strrchr(p, '/') = '\0';
	return syscall(SYS_openat, AT_FDCWD, p, O_RDONLY | O_DIRECTORY);
}

/* A file the bridge must not see made: raw system calls only. */
static void raw_create(const char *path, const char *content)
{
	int fd = syscall(SYS_openat, AT_FDCWD, path,
			 O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return;
	syscall(SYS_write, fd, content, strlen(content));
	syscall(SYS_close, fd);
}

static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	int fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);

	if (fd < 0)
		return NULL;
	buf = fstat(fd, &st) ? NULL : malloc(st.st_size + 1);
	if (!buf) {
		syscall(SYS_close, fd);
		return NULL;
	}
	*len = pread(fd, buf, st.st_size, 0);
	buf[*len] = '\0';
	syscall(SYS_close, fd);
	return buf;
}

/* Where the fake runtime writes: a FILE or an fd. */
struct sink {
	FILE	*fp;
	int	fd;
};

static int put(const struct sink *s, int m, const void *p, size_t n)
{
	if (m == W_FPRINTF_CHK || m == W_VFPRINTF_CHK)
		return wf_put_file(s->fp, m, p, n);
	if (m < W_NR_FILE)
		return wp_put_file(s->fp, m, p, n);
	if (m == W_DPRINTF_CHK || m == W_VDPRINTF_CHK)
		return wf_put_fd(s->fd, m, p, n);
	if (m == W_PWRITE64 || m == W_PWRITEV64)
		return wl_put_fd(s->fd, m, p, n);
	return wp_put_fd(s->fd, m, p, n);
}

/* Perf-map line formats, each taking (addr, size, name). */
static const char *const styles[] = {
	"%lx %lx %s\n",			/* V8, Mono, CPython, QEMU, wasmtime */
	"0x%016lx 0x%016lx %s\n",	/* the JDK's INTPTR_FORMAT */
	"0x%lx %lx %s\n",		/* Erlang's %p */
	"%lX %lX %s\n",
	"%012lx %08lx %s\n",
};

#define NR_STYLES	(sizeof(styles) / sizeof(styles[0]))

/* One line in one printf call, where the method is a printf. */
static int put_line_printf(const struct sink *s, int m, const char *fmt,
			   uint64_t addr, uint64_t len, const char *name)
{
	switch (m) {
	case W_FPRINTF_CHK:
	case W_VFPRINTF_CHK:
		return wf_line_file(s->fp, m, fmt, addr, len, name);
	case W_DPRINTF_CHK:
	case W_VDPRINTF_CHK:
		return wf_line_fd(s->fd, m, fmt, addr, len, name);
	case W_DPRINTF:
	case W_VDPRINTF:
		return wp_line_fd(s->fd, m, fmt, addr, len, name);
	default:
		return wp_line_file(s->fp, m, fmt, addr, len, name);
	}
}

/*
 * @n bytes in @pieces calls of @m: until the last, nothing more may be
 * live than @live has.
 */
static void put_pieces(const struct sink *s, int m, const void *p, size_t n,
		       int pieces, struct model *live, const char *what)
{
	size_t at = 0, to;
	int i;

	for (i = 1; i <= pieces; i++) {
		to = n * i / pieces;
		CHECK(!put(s, m, (const char *)p + at, to - at),
		      "%s: %s failed", what, w_names[m]);
		at = to;
		if (i < pieces)
			EXPECT(live, what);
	}
}

/* A perf-map line, whole (@pieces 1) or split; then it must be live. */
static void map_line(const struct sink *s, int m, unsigned int style,
		     uint64_t addr, uint64_t len, const char *name,
		     int pieces, struct model *live)
{
	char *text;

	if (pieces == 1 && w_is_printf(m)) {
		CHECK(!put_line_printf(s, m, styles[style % NR_STYLES], addr,
				       len, name), "%s failed", w_names[m]);
	} else {
		if (asprintf(&text, styles[style % NR_STYLES], addr, len,
			     name) < 0)
			abort();
		put_pieces(s, m, text, strlen(text), pieces, live, name);
		free(text);
	}
	model_load(live, addr, len, name);
	EXPECT(live, name);
}

/* Text as it is; the caller says what must be live after it. */
static void put_text(const struct sink *s, int m, const char *text)
{
	CHECK(!put(s, m, text, strlen(text)), "%s failed", w_names[m]);
}

/* Text that is no valid line, or a part of one: nothing changes. */
static void map_text(const struct sink *s, int m, const char *text,
		     struct model *live)
{
	put_text(s, m, text);
	EXPECT(live, text);
}

/* The jitdump format (tools/perf/Documentation/jitdump-specification.txt). */
#define JIT_MAGIC		0x4A695444
#define JIT_CODE_LOAD		0
#define JIT_CODE_MOVE		1
#define JIT_CODE_DEBUG_INFO	2
#define JIT_CODE_CLOSE		3
#define JIT_CODE_UNWINDING_INFO	4

struct jheader {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};

struct jprefix {
	uint32_t id, total_size;
	uint64_t timestamp;
};

struct jload {
	struct jprefix p;
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
};

struct jmove {
	struct jprefix p;
	uint32_t pid, tid;
	uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
};

/* Fixed stamps and ids: the files must not depend on the run. */
static uint64_t jit_clock = 1000, jit_index;

static void jit_header(const struct sink *s, int m, uint32_t extra,
		       int pieces, struct model *live)
{
	char buf[sizeof(struct jheader) + 64] = { 0 };
	struct jheader h = {
		.magic = JIT_MAGIC, .version = 1,
		.total_size = sizeof(h) + extra, .elf_mach = 62,
		.pid = 4242, .timestamp = jit_clock++,
	};

	memcpy(buf, &h, sizeof(h));
	memset(buf + sizeof(h), 0xee, extra);
	put_pieces(s, m, buf, sizeof(h) + extra, pieces, live, "header");
	EXPECT(live, "header");
}

/* Code bytes: zeros and newlines, which must not confuse anything. */
static const unsigned char code_bytes[64] = {
	0x55, 0x48, 0x89, 0xe5, 0x00, 0x00, 0x0a, 0x0a, 0x00, 0xc3,
	'1', '0', '0', '0', ' ', '1', '0', ' ', 'x', '\n',
};

/*
 * A JIT_CODE_LOAD as V8 writes it: the head (in @pieces calls), the
 * name, its NUL, the code. The code is live from the NUL on. With no
 * @live, the record is one the bridge must not take: the caller checks.
 */
static void jit_load(const struct sink *s, int m, uint64_t addr, uint64_t len,
		     const char *name, size_t code_len, int pieces,
		     struct model *live)
{
	size_t nl = strlen(name);
	struct jload r = {
		.p = { JIT_CODE_LOAD, sizeof(r) + nl + 1 + code_len,
		       jit_clock++ },
		.pid = 4242, .tid = 4243, .vma = addr, .code_addr = addr,
		.code_size = len, .code_index = ++jit_index,
	};

	if (!live) {
		CHECK(!put(s, m, &r, sizeof(r)) && !put(s, m, name, nl + 1) &&
		      !put(s, m, code_bytes, code_len), "%s failed", w_names[m]);
		return;
	}
	put_pieces(s, m, &r, sizeof(r), pieces, live, name);
	EXPECT(live, name);
	put_pieces(s, m, name, nl, 2, live, name);
	EXPECT(live, name);
	CHECK(!put(s, m, "", 1), "%s failed", w_names[m]);
	model_load(live, addr, len, name);
	EXPECT(live, name);
	CHECK(!put(s, m, code_bytes, code_len), "%s failed", w_names[m]);
	EXPECT(live, name);
}

static void jit_move(const struct sink *s, int m, uint64_t old, uint64_t new,
		     uint64_t len, struct model *live)
{
	struct jmove r = {
		.p = { JIT_CODE_MOVE, sizeof(r), jit_clock++ },
		.pid = 4242, .tid = 4243, .vma = new, .old_code_addr = old,
		.new_code_addr = new, .code_size = len, .code_index = 1,
	};

	put_pieces(s, m, &r, sizeof(r), 2, live, "move");
	model_move(live, old, new);
	EXPECT(live, "move");
}

/* A record the bridge skips by its size: its payload must not count. */
static void jit_other(const struct sink *s, int m, uint32_t id,
		      size_t payload, struct model *live)
{
	char buf[256];
	struct jprefix p = { id, sizeof(p) + payload, jit_clock++ };
	size_t i;

	/* A payload that starts like a LOAD record's prefix. */
	memcpy(buf, &p, sizeof(p));
	for (i = 0; i < payload; i++)
		buf[sizeof(p) + i] = i < 8 ? 0 : 'A' + i % 26;
	if (payload >= 8)
		memcpy(buf + sizeof(p) + 4, &p.total_size, 4);
	put_pieces(s, m, buf, sizeof(p) + payload, 3, live, "other record");
	EXPECT(live, "other record");
}

static void jit_close(const struct sink *s, int m, struct model *live)
{
	struct jprefix p = { JIT_CODE_CLOSE, sizeof(p), jit_clock++ };

	CHECK(!put(s, m, &p, sizeof(p)), "%s failed", w_names[m]);
	EXPECT(live, "close");
}

/* Code addresses: made up, the registry does not look at them. */
#define CODE(region, off)	(0x7f0000000000ULL + ((uint64_t)(region) << 32) + (off))

/* The code of every test, live until the process ends. */
static struct model live;

static FILE *must_fopen(const char *path, const char *mode)
{
	FILE *fp = wp_fopen(path, mode);

	CHECK(fp, "fopen %s: %s", path, strerror(errno));
	if (!fp)
		exit(1);
	return fp;
}

/* Every FILE-level call writes lines, split and whole. */
static void t_map_file_calls(void)
{
	struct sink s = { .fd = -1 };
	char name[256];
	int m;

	test_begin("map-every-FILE-call");
	s.fp = must_fopen(path_of("map-file", "perf-%d.map", getpid()), "w");
	for (m = 0; m < W_NR_FILE; m++) {
		snprintf(name, sizeof(name), "JS:~%s /app/x.js:%d:7", w_names[m],
			 m + 1);
		map_line(&s, m, m, CODE(1, m * 0x1000), 0x100 + m, name, 3,
			 &live);
		snprintf(name, sizeof(name), "Builtin: %s whole", w_names[m]);
		map_line(&s, m, m + 1, CODE(1, m * 0x1000 + 0x800), 0x40, name,
			 1, &live);
	}
	/* Two lines and the start of a third in one call. */
	put_text(&s, W_FWRITE,
		 "7f0f00000000 10 two in one\n7f0f00000100 20 two in one b\n7f0f000002");
	model_load(&live, CODE(15, 0), 0x10, "two in one");
	model_load(&live, CODE(15, 0x100), 0x20, "two in one b");
	EXPECT(&live, "two lines in one call");
	map_text(&s, W_FPUTS, "00 30 the third", &live);
	put_text(&s, W_FPUTC, "\n");
	model_load(&live, CODE(15, 0x200), 0x30, "the third");
	EXPECT(&live, "the third");
	CHECK(!wp_fflush(s.fp), "fflush");
	CHECK(!wp_fclose(s.fp), "fclose");
	EXPECT(&live, "fclose");
	test_end();
}

/* Fields as perf reads them, names as they are, lines perf skips. */
static void t_map_fields(void)
{
	static char long_name[6000];
	struct sink s = { .fd = -1 };
	char *text;
	size_t i;

	test_begin("map-fields-and-names");
	s.fp = must_fopen(path_of("map-fields", "perf-%d.map", getpid()), "w");
	for (i = 0; i < NR_STYLES; i++)
		map_line(&s, W_FPUTS, i, CODE(2, i * 0x100), 0x80 + i,
			 "padded, prefixed, upper", 1, &live);
	map_line(&s, W_FPUTS, 0, CODE(2, 0x1000), 0x10,
		 "  spaces  inside and after ", 1, &live);
	map_line(&s, W_FPUTS, 0, CODE(2, 0x1100), 0x10,
		 "T:Hot (int)\tand a tab", 1, &live);
	map_line(&s, W_FPUTS, 0, CODE(2, 0x1200), 0x10, "x", 1, &live);
	/* Lines perf does not take, nor does the bridge. */
	map_text(&s, W_FPUTS, "\n", &live);
	map_text(&s, W_FPUTS, "# a comment\n", &live);
	map_text(&s, W_FPUTS, "7f0300000000 10\n", &live);
	map_text(&s, W_FPUTS, "7f0300000000 10 \n", &live);
	map_text(&s, W_FPUTS, "7f0300000000  10 two spaces\n", &live);
	map_text(&s, W_FPUTS, " 7f0300000000 10 leading space\n", &live);
	map_text(&s, W_FPUTS, "7f0300000000 0 no size\n", &live);
	map_text(&s, W_FPUTS, "ffffffffffffff00 200 wraps\n", &live);
	map_text(&s, W_FPUTS, "10000000000000000 10 too big\n", &live);
	map_text(&s, W_FPUTS, "zz 10 not hex\n", &live);
	map_text(&s, W_FPUTS, "0x 10 no digits\n", &live);
	/* Names are cut at 4095 bytes, as libperfinject takes them. */
	memset(long_name, 'n', sizeof(long_name) - 1);
	map_line(&s, W_FWRITE, 0, CODE(2, 0x2000), 0x10, long_name, 2, &live);
	/* A line longer than the bridge keeps: its name is cut too. */
	if (asprintf(&text, "%lx 10 %s%s\n", (unsigned long)CODE(2, 0x3000),
		     long_name, long_name) < 0)
		abort();
	put_pieces(&s, W_FWRITE, text, strlen(text), 4, &live, "long line");
	model_load(&live, CODE(2, 0x3000), 0x10, long_name);
	EXPECT(&live, "long line");
	free(text);
	CHECK(!wp_fclose(s.fp), "fclose");
	test_end();
}

/* Addresses used again, as every runtime does, never unloading. */
static void t_map_reuse(void)
{
	struct sink s = { .fd = -1 };
	uint64_t changes;

	test_begin("map-reused-addresses");
	s.fp = must_fopen(path_of("map-reuse", "perf-%d.map", getpid()), "w");
	map_line(&s, W_FPUTS, 0, CODE(3, 0x000), 0x100, "a", 1, &live);
	map_line(&s, W_FPUTS, 0, CODE(3, 0x100), 0x100, "b", 1, &live);
	map_line(&s, W_FPUTS, 0, CODE(3, 0x200), 0x100, "c", 1, &live);
	map_line(&s, W_FPUTS, 0, CODE(3, 0x400), 0x100, "d", 1, &live);
	/* The same again changes nothing, not even the registry's count. */
	changes = registry_changes();
	map_line(&s, W_FPUTS, 1, CODE(3, 0x000), 0x100, "a", 1, &live);
	CHECK(registry_changes() == changes, "a duplicate changed the registry");
	/* Same start, other name; same start, other length. */
	map_line(&s, W_FPUTS, 0, CODE(3, 0x000), 0x100, "a2", 1, &live);
	map_line(&s, W_FPUTS, 0, CODE(3, 0x000), 0x80, "a2", 1, &live);
	/* Over the end of one and the start of the next. */
	map_line(&s, W_FPUTS, 0, CODE(3, 0x1f0), 0x20, "bc", 1, &live);
	/* Over several at once. */
	map_line(&s, W_FPUTS, 0, CODE(3, 0x050), 0x400, "big", 1, &live);
	/* Inside one. */
	map_line(&s, W_FPUTS, 0, CODE(3, 0x100), 0x10, "small", 1, &live);
	/* Touching is not overlapping. */
	map_line(&s, W_FPUTS, 0, CODE(3, 0x450), 0x50, "after", 1, &live);
	map_line(&s, W_FPUTS, 0, CODE(3, 0x040), 0x10, "before", 1, &live);
	CHECK(!wp_fclose(s.fp), "fclose");
	test_end();
}

/*
 * CPython: open(O_APPEND) and fdopen("a"), fprintf and fflush per
 * entry. What the file held before is not this process's code.
 */
static void t_map_append(void)
{
	struct sink s = { .fd = -1 };
	char *path = path_of("map-append", "perf-%d.map", getpid());
	static const int ms[] = { W_FPRINTF, W_VFPRINTF, W_IO_VFPRINTF,
				  W_FPRINTF_CHK, W_VFPRINTF_CHK };
	size_t i;
	int fd;

	test_begin("map-fdopen-append");
	raw_create(path, "7f0400000000 10 stale line of an earlier process\n");
	fd = wp_open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	s.fp = wp_fdopen(fd, "a");
	CHECK(s.fp, "fdopen: %s", strerror(errno));
	for (i = 0; i < 20; i++) {
		char name[64];

		snprintf(name, sizeof(name), "py::f%zu:/app/mod.py", i);
		map_line(&s, ms[i % 5], 0, CODE(4, i * 0x100), 0x80, name, 1,
			 &live);
		CHECK(!wp_fflush(s.fp), "fflush");
	}
	CHECK(!wp_fclose(s.fp), "fclose");
	test_end();
}

/* wasmtime and friends: the fd calls, lines split across them. */
static void t_map_fd_calls(void)
{
	struct sink s = { .fp = NULL };
	char name[128];
	int m, dirfd;

	test_begin("map-every-fd-call");
	dirfd = dir_of("map-fd");
	snprintf(name, sizeof(name), "perf-%d.map", getpid());
	s.fd = wp_openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(s.fd >= 0, "openat: %s", strerror(errno));
	for (m = W_NR_FILE; m < W_NR; m++) {
		snprintf(name, sizeof(name), "wasm[%d]::%s function", m,
			 w_names[m]);
		map_line(&s, m, m, CODE(5, m * 0x1000), 0x100 + m, name, 3,
			 &live);
		snprintf(name, sizeof(name), "whole %s", w_names[m]);
		map_line(&s, m, m + 2, CODE(5, m * 0x1000 + 0x800), 0x20, name,
			 1, &live);
	}
	CHECK(!wp_close(s.fd), "close");
	syscall(SYS_close, dirfd);
	EXPECT(&live, "close");
	test_end();
}

/*
 * V8 --perf-prof: open, the marker mmap, fdopen("w+"), a big buffer;
 * every FILE call writes records, split anywhere.
 */
static void t_jit_file_calls(void)
{
	char *path = path_of("jit-file", "jit-%d.dump", getpid());
	struct sink s = { .fd = -1 };
	char name[128];
	void *marker;
	int fd, m;

	test_begin("jitdump-every-FILE-call");
	fd = wp_open(path, O_CREAT | O_TRUNC | O_RDWR, 0666);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	marker = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	CHECK(marker != MAP_FAILED, "marker mmap: %s", strerror(errno));
	s.fp = wp_fdopen(fd, "w+");
	setvbuf(s.fp, NULL, _IOFBF, 0x200000);
	/* A header bigger than the 40 bytes perf knows. */
	jit_header(&s, W_FWRITE, 8, 3, &live);
	jit_other(&s, W_FWRITE, JIT_CODE_UNWINDING_INFO, 40, &live);
	jit_other(&s, W_FWRITE, JIT_CODE_DEBUG_INFO, 64, &live);
	jit_other(&s, W_FWRITE, 99, 24, &live);
	jit_other(&s, W_FWRITE, 7, 0, &live);
	for (m = 0; m < W_NR_FILE; m++) {
		snprintf(name, sizeof(name), "JS:*%s /app/y.js:1:1", w_names[m]);
		jit_load(&s, m, CODE(6, m * 0x1000), 0x200, name,
			 m % 3 ? sizeof(code_bytes) : 0, 1 + m % 4, &live);
		jit_other(&s, m, JIT_CODE_UNWINDING_INFO, 32, &live);
	}
	/* Reuse; a move onto other code; a move of unknown code. */
	jit_load(&s, W_FWRITE, CODE(6, 0x100), 0x1000, "over three", 8, 1,
		 &live);
	jit_move(&s, W_FWRITE_BYTES, CODE(6, 0x100), CODE(6, 0x8100), 0x1000,
		 &live);
	jit_move(&s, W_FWRITE_BYTES, CODE(6, 0x77777), CODE(6, 0x9000), 0x10,
		 &live);
	/* A LOAD with no name at all, one whose name has no NUL. */
	{
		struct jload r = {
			.p = { JIT_CODE_LOAD, sizeof(r), jit_clock++ },
			.code_addr = CODE(6, 0xa000), .code_size = 0x10,
		};

		CHECK(!put(&s, W_FWRITE, &r, sizeof(r)), "fwrite");
		EXPECT(&live, "no name");
		r.p.total_size = sizeof(r) + 5;
		r.p.timestamp = jit_clock++;
		CHECK(!put(&s, W_FWRITE, &r, sizeof(r)), "fwrite");
		CHECK(!put(&s, W_FWRITE, "nonul", 5), "fwrite");
		model_load(&live, CODE(6, 0xa000), 0x10, "nonul");
		EXPECT(&live, "name without NUL");
	}
	jit_close(&s, W_FWRITE, &live);
	/* After JIT_CODE_CLOSE nothing counts. */
	{
		struct jload r = {
			.p = { JIT_CODE_LOAD, sizeof(r) + 6, jit_clock++ },
			.code_addr = CODE(6, 0xb000), .code_size = 0x10,
		};

		CHECK(!put(&s, W_FWRITE, &r, sizeof(r)), "fwrite");
		CHECK(!put(&s, W_FWRITE, "after", 6), "fwrite");
		EXPECT(&live, "after close");
	}
	CHECK(!wp_fclose(s.fp), "fclose");
	munmap(marker, 4096);
	test_end();
}

/* wasmtime: unbuffered writes, one per field, and every fd call. */
static void t_jit_fd_calls(void)
{
	char *path = path_of("jit-fd", "jit-%d.dump", getpid());
	struct sink s = { .fp = NULL };
	char name[128];
	int m;

	test_begin("jitdump-every-fd-call");
	s.fd = wl_open(path, O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
	CHECK(s.fd >= 0, "open64: %s", strerror(errno));
	jit_header(&s, W_WRITE, 0, 6, &live);
	for (m = W_NR_FILE; m < W_NR; m++) {
		snprintf(name, sizeof(name), "wasm-function[%d] %s", m,
			 w_names[m]);
		/* One call per field, as wasmtime's write_all does. */
		jit_load(&s, m, CODE(7, m * 0x1000), 0x300, name, 16, 8, &live);
		jit_other(&s, m, JIT_CODE_DEBUG_INFO, 48, &live);
	}
	jit_move(&s, W_WRITEV, CODE(7, W_WRITE * 0x1000),
		 CODE(7, W_WRITEV * 0x1000 + 0x100), 0x300, &live);
	CHECK(!wp_close(s.fd), "close");
	test_end();
}

/*
 * Erlang +JPperf true: every range goes to the perf map and to the
 * jitdump; the second time changes nothing.
 */
static void t_both_files(void)
{
	struct sink map = { .fd = -1 }, dump = { .fd = -1 };
	char name[64], dname[64];
	uint64_t changes;
	int i;

	test_begin("both-files-same-ranges");
	map.fp = must_fopen(path_of("both", "perf-%d.map", getpid()), "w");
	dump.fp = must_fopen(path_of("both", "jit-%d.dump", getpid()), "w+");
	jit_header(&dump, W_FWRITE, 0, 1, &live);
	CHECK(!wp_fflush(dump.fp), "fflush");
	for (i = 0; i < 24; i++) {
		/* OTP 25's names: "$m:f/A" in the map, "m:f/A" in the dump. */
		snprintf(name, sizeof(name), "$mod%d:fun/%d", i / 8, i % 3);
		snprintf(dname, sizeof(dname), "%s", i % 2 ? name : name + 1);
		map_line(&map, W_FPRINTF, 2, CODE(8, i * 0x80), 0x80, name, 1,
			 &live);
		changes = registry_changes();
		jit_load(&dump, W_FWRITE, CODE(8, i * 0x80), 0x80, dname, 16,
			 1, NULL);
		CHECK(registry_changes() == changes,
		      "the jitdump's copy of %s changed the registry", name);
		EXPECT(&live, dname);
		/* A module ends: Erlang flushes both. */
		if (i % 8 == 7) {
			CHECK(!wp_fflush(map.fp), "fflush");
			CHECK(!wp_fflush(dump.fp), "fflush");
		}
	}
	/* New code where old code was: each file's copy, one change. */
	map_line(&map, W_FPRINTF, 2, CODE(8, 0), 0x80, "$mod9:new/0", 1, &live);
	changes = registry_changes();
	jit_load(&dump, W_FWRITE, CODE(8, 0), 0x80, "mod9:new/0", 16, 1, NULL);
	CHECK(registry_changes() == changes, "the jitdump's copy changed it");
	EXPECT(&live, "new code in both files");
	CHECK(!wp_fclose(map.fp), "fclose");
	CHECK(!wp_fclose(dump.fp), "fclose");
	test_end();
}

/* One line through a file opened by @how; the registry has it. */
static void open_line(const char *how, int fd, FILE *fp, int region,
		      int *nth)
{
	struct sink s = { .fp = fp, .fd = fd };
	char name[64];

	CHECK(fd >= 0 || fp, "%s: %s", how, strerror(errno));
	if (fd < 0 && !fp)
		return;
	snprintf(name, sizeof(name), "opened by %s", how);
	map_line(&s, fp ? W_FPUTS : W_WRITE, 0, CODE(region, *nth * 0x100),
		 0x40, name, 1, &live);
	(*nth)++;
	if (fp)
		CHECK(!wp_fclose(fp), "fclose");
	else
		CHECK(!wp_close(fd), "close");
}

static void t_open_calls(void)
{
	char base[64];
	int n = 0, dirfd;
	FILE *fp;

	test_begin("every-open-call");
	snprintf(base, sizeof(base), "perf-%d.map", getpid());
#define P(sub)	path_of(sub, "perf-%d.map", getpid())
	open_line("open", wp_open(P("o1"), O_WRONLY | O_CREAT | O_TRUNC, 0644),
		  NULL, 9, &n);
	open_line("open64", wp_open64(P("o2"), O_WRONLY | O_CREAT, 0644),
		  NULL, 9, &n);
	dirfd = dir_of("o3");
	open_line("openat", wp_openat(dirfd, base, O_WRONLY | O_CREAT, 0644),
		  NULL, 9, &n);
	syscall(SYS_close, dirfd);
	dirfd = dir_of("o4");
	open_line("openat64", wl_openat(dirfd, base, O_WRONLY, 0644), NULL, 9,
		  &n);
	syscall(SYS_close, dirfd);
	/* The two-argument opens cannot create: the files exist. */
	raw_create(P("o5"), "");
	open_line("__open_2", wf_open_2(P("o5"), O_WRONLY | O_TRUNC), NULL, 9,
		  &n);
	raw_create(P("o6"), "");
	open_line("__open64_2", wl_open_2(P("o6"), O_RDWR), NULL, 9, &n);
	raw_create(P("o7"), "");
	open_line("__openat_2", wf_openat_2(AT_FDCWD, P("o7"), O_WRONLY), NULL,
		  9, &n);
	raw_create(P("o8"), "");
	dirfd = dir_of("o8");
	open_line("__openat64_2", wl_openat_2(dirfd, base, O_WRONLY), NULL, 9,
		  &n);
	syscall(SYS_close, dirfd);
	open_line("creat", wp_creat(P("o9"), 0644), NULL, 9, &n);
	open_line("creat64", wl_creat(P("o10"), 0644), NULL, 9, &n);
	open_line("fopen", -1, wp_fopen(P("o11"), "w"), 9, &n);
	open_line("fopen64", -1, wl_fopen(P("o12"), "a+"), 9, &n);
	open_line("_IO_fopen", -1, wp_io_fopen(P("o13"), "w"), 9, &n);
	raw_create(P("o14"), "");
	open_line("fopen r+", -1, wp_fopen(P("o14"), "r+"), 9, &n);
	fp = wp_fopen("/dev/null", "w");
	open_line("freopen", -1, wp_freopen(P("o15"), "w", fp), 9, &n);
	fp = wp_fopen("/dev/null", "w");
	open_line("freopen64", -1, wl_freopen(P("o16"), "w", fp), 9, &n);
	/* freopen() without a path: the same file, reopened. */
	fp = must_fopen(P("o17"), "w");
	open_line("freopen NULL", -1, wp_freopen(NULL, "w", fp), 9, &n);
	/* fdopen() of an fd no hook saw opened: known by its path. */
	open_line("fdopen", -1,
		  wp_fdopen(syscall(SYS_openat, AT_FDCWD, P("o18"),
				    O_WRONLY | O_CREAT, 0644), "w"), 9, &n);
	open_line("_IO_fdopen", -1,
		  wp_io_fdopen(syscall(SYS_openat, AT_FDCWD, P("o19"),
				       O_WRONLY | O_CREAT, 0644), "w"), 9, &n);
	/* A jitdump by each kind of open too. */
	{
		struct sink s = { .fd = -1 };

		s.fp = wl_fopen(path_of("o20", "jit-%d.dump", getpid()), "w");
		jit_header(&s, W_FPUTC, 0, 2, &live);
		jit_load(&s, W_FPUTC, CODE(9, 0x10000), 0x40, "fopen64 jit", 4,
			 3, &live);
		CHECK(!wp_fclose(s.fp), "fclose");
		s.fp = NULL;
		s.fd = wp_creat(path_of("o21", "jit-%d.dump", getpid()), 0600);
		jit_header(&s, W_WRITEV, 0, 2, &live);
		jit_load(&s, W_PWRITE, CODE(9, 0x10100), 0x40, "creat jit", 4,
			 3, &live);
		CHECK(!wp_close(s.fd), "close");
	}
#undef P
	test_end();
}

/* Files that are not this process's map or dump: nothing comes of them. */
static void t_not_ours(void)
{
	static const char line[] = "7f0a00000000 10 not ours\n";
	char path[PATH_MAX];
	int fd;
	FILE *fp;

	test_begin("other-files-untouched");
#define NOT_OURS_FD(p, fl)						\
	do {								\
		fd = wp_open(p, fl, 0644);				\
		CHECK(fd >= 0, "open %s: %s", p, strerror(errno));	\
		if (write(fd, line, sizeof(line) - 1) < 0 && errno != EBADF) \
			CHECK(0, "write: %s", strerror(errno));		\
		EXPECT(&live, p);					\
		wp_close(fd);						\
	} while (0)
	NOT_OURS_FD(path_of("n1", "perf-%d.map", getpid() + 1),
		    O_WRONLY | O_CREAT);
	NOT_OURS_FD(path_of("n2", "perf-%d.map.tmp", getpid()),
		    O_WRONLY | O_CREAT);
	NOT_OURS_FD(path_of("n3", "xperf-%d.map", getpid()),
		    O_WRONLY | O_CREAT);
	NOT_OURS_FD(path_of("n4", "jit-%d.dumpx", getpid()),
		    O_WRONLY | O_CREAT);
	NOT_OURS_FD(path_of("n5", "perf-0%d.map", getpid()),
		    O_WRONLY | O_CREAT);
	snprintf(path, sizeof(path), "%s", path_of("n6", "perf-%d.map",
						   getpid()));
	raw_create(path, line);
	/* Opened for reading: written by nobody. */
	NOT_OURS_FD(path, O_RDONLY);
	fd = wp_open(path, O_PATH | O_WRONLY, 0);
	wp_close(fd);
	fp = wp_fopen(path, "r");
	CHECK(fp, "fopen r");
	if (fp) {
		fputs(line, fp);
		wp_fclose(fp);
	}
	EXPECT(&live, "not ours");
#undef NOT_OURS_FD
	test_end();
}

/* A valid line into @fd, which is no map any more: nothing changes. */
static void write_elsewhere(int fd, const char *what, struct model *m)
{
	static const char line[] = "7f0b00000000 10 elsewhere\n";

	CHECK(write(fd, line, sizeof(line) - 1) == sizeof(line) - 1,
	      "%s: write: %s", what, strerror(errno));
	EXPECT(m, what);
}

static int open_map(const char *sub)
{
	int fd = wp_open(path_of(sub, "perf-%d.map", getpid()),
			 O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0, "open: %s", strerror(errno));
	return fd;
}

static int open_other(const char *sub)
{
	int fd = wp_open(path_of(sub, "other-%d", getpid()),
			 O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0, "open: %s", strerror(errno));
	return fd;
}

/* In a child: its registry holds @live; exit with the verdict. */
static void child_verdict(struct model *m)
{
	EXPECT(m, "child");
	fflush(stdout);
	_exit(test_failures ? 1 : 0);
}

static void wait_child(pid_t pid, const char *what)
{
	int status;

	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      !WEXITSTATUS(status), "%s: child status %#x", what, status);
}

/*
 * How a map stops being one: fclose, close, dup2 or dup3 onto its fd,
 * close_range, closefrom. Whatever next gets its fd or FILE is not
 * tracked. The flushes, fcloseall included, keep it one.
 */
static void t_lifecycle(void)
{
	struct sink s = { .fd = -1 };
	int fd, other;
	FILE *fp;
	pid_t pid;

	test_begin("lifecycle-calls");
	/* Flushes of a clean stream change nothing. */
	s.fp = must_fopen(path_of("l1", "perf-%d.map", getpid()), "w");
	map_line(&s, W_FPUTS, 0, CODE(11, 0x000), 0x10, "l1", 1, &live);
	CHECK(!wp_fflush(s.fp), "fflush");
	CHECK(!wp_fflush_unlocked(s.fp), "fflush_unlocked");
	CHECK(!wp_io_fflush(s.fp), "_IO_fflush");
	CHECK(!wp_fflush(NULL), "fflush(NULL)");
	CHECK(!wp_fflush_unlocked(NULL), "fflush_unlocked(NULL)");
	fd = fileno(s.fp);
	CHECK(!wp_fclose(s.fp), "fclose");
	other = open_other("l1");
	CHECK(other == fd, "fd %d, not %d", other, fd);
	write_elsewhere(other, "after fclose", &live);
	fp = wp_fopen(path_of("l1", "other2-%d", getpid()), "w");
	fputs("7f0b00000000 10 elsewhere\n", fp);
	fflush(fp);
	EXPECT(&live, "a FILE after fclose");
	wp_close(other);
	wp_fclose(fp);

	s.fp = must_fopen(path_of("l2", "perf-%d.map", getpid()), "w");
	map_line(&s, W_FPUTS, 0, CODE(11, 0x100), 0x10, "l2", 1, &live);
	CHECK(!wp_io_fclose(s.fp), "_IO_fclose");

	s.fp = NULL;
	fd = open_map("l3");
	s.fd = fd;
	map_line(&s, W_WRITE, 0, CODE(11, 0x200), 0x10, "l3", 1, &live);
	CHECK(!wp_close(fd), "close");
	other = open_other("l3");
	write_elsewhere(other, "after close", &live);
	wp_close(other);

	fd = open_map("l4");
	s.fd = fd;
	map_line(&s, W_WRITE, 0, CODE(11, 0x300), 0x10, "l4", 1, &live);
	other = open_other("l4");
	CHECK(wp_dup2(other, fd) == fd, "dup2");
	write_elsewhere(fd, "after dup2", &live);
	wp_close(fd);
	wp_close(other);

	fd = open_map("l5");
	s.fd = fd;
	map_line(&s, W_WRITE, 0, CODE(11, 0x400), 0x10, "l5", 1, &live);
	other = open_other("l5");
	CHECK(wp_dup3(other, fd, O_CLOEXEC) == fd, "dup3");
	write_elsewhere(fd, "after dup3", &live);
	wp_close(fd);
	wp_close(other);

	/* close_range() with CLOSE_RANGE_CLOEXEC closes nothing. */
	fd = open_map("l6");
	s.fd = fd;
	CHECK(!wp_close_range(fd, fd, CLOSE_RANGE_CLOEXEC), "close_range");
	map_line(&s, W_WRITE, 0, CODE(11, 0x500), 0x10, "l6", 1, &live);
	CHECK(!wp_close_range(fd, fd, 0), "close_range");
	other = open_other("l6");
	write_elsewhere(other, "after close_range", &live);
	wp_close(other);

	/* closefrom() and fcloseall() reach too far: in children. */
	fflush(stdout);
	pid = fork();
	if (!pid) {
		struct model mine = { 0 };

		fd = open_map("l7");
		s.fd = fd;
		map_line(&s, W_WRITE, 0, CODE(11, 0x600), 0x10, "l7", 1,
			 &mine);
		wp_closefrom(fd);
		other = open_other("l7");
		write_elsewhere(other, "after closefrom", &mine);
		child_verdict(&mine);
	}
	wait_child(pid, "closefrom");
	fflush(stdout);
	pid = fork();
	if (!pid) {
		struct model mine = { 0 };

		s.fd = -1;
		s.fp = must_fopen(path_of("l8", "perf-%d.map", getpid()), "w");
		map_line(&s, W_FPUTS, 0, CODE(11, 0x700), 0x10, "l8", 1,
			 &mine);
		/* glibc's flushes every stream and closes none. */
		CHECK(!wp_fcloseall(), "fcloseall");
		map_line(&s, W_FPUTS, 0, CODE(11, 0x780), 0x10, "l8 after", 1,
			 &mine);
		child_verdict(&mine);
	}
	wait_child(pid, "fcloseall");
	test_end();
}

/* The _chk calls' flag holds through the bridge: %n in writable memory. */
static void t_fortify_flag(void)
{
	int status;
	pid_t pid;

	test_begin("fortify-flag-kept");
	fflush(stdout);
	pid = fork();
	if (!pid) {
		FILE *fp = must_fopen(path_of("chk", "perf-%d.map", getpid()),
				      "w");
		int devnull = open("/dev/null", O_WRONLY);

		/* glibc says why it aborts on the tty; not here. */
		dup2(devnull, 2);
		wf_percent_n(fp);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
	      WTERMSIG(status) == SIGABRT, "child status %#x", status);
	test_end();
}

/*
 * fork(): the child writes its own map and starts with nothing live;
 * what it writes into the parent's inherited FILE is not its code. (It
 * never flushes that FILE: in the parent's file it would be the parent's
 * to read back, as the self-check does.)
 */
static void t_fork(void)
{
	struct sink s = { .fd = -1 }, c = { .fd = -1 };
	struct model child = { 0 };
	int up[2], down[2];
	char byte;
	pid_t pid;

	test_begin("fork-child-starts-afresh");
	s.fp = must_fopen(path_of("fork-parent", "perf-%d.map", getpid()), "w");
	map_line(&s, W_FPUTS, 0, CODE(12, 0x000), 0x100, "parent 1", 1, &live);
	map_line(&s, W_FPUTS, 0, CODE(12, 0x100), 0x100, "parent 2", 1, &live);
	CHECK(!wp_fflush(s.fp), "fflush");
	fflush(stdout);
	if (pipe(up) || pipe(down))
		abort();
	/* What the child will have: its own lines only. */
	model_load(&child, CODE(12, 0x1000), 0x100, "child 1");
	model_load(&child, CODE(12, 0x1080), 0x100, "child 2");
	pid = fork();
	if (!pid) {
		struct model mine = { 0 };

		c.fp = must_fopen(path_of("fork-child", "perf-%d.map",
					  getpid()), "w");
		map_line(&c, W_FPRINTF, 0, CODE(12, 0x1000), 0x100, "child 1",
			 1, &mine);
		put_text(&s, W_FPUTS, "7f0c00000300 100 in the parent's FILE\n");
		map_line(&c, W_FPRINTF, 0, CODE(12, 0x1080), 0x100, "child 2",
			 1, &mine);
		CHECK(!wp_fclose(c.fp), "fclose");
		if (write(up[1], "r", 1) != 1 || read(down[0], &byte, 1) != 1)
			_exit(2);
		child_verdict(&mine);
	}
	CHECK(read(up[0], &byte, 1) == 1, "child did not get ready");
	/* Read from the parent too, as a profiler would. */
	expect_pid(pid, &child, "the child's registry, read by the parent");
	CHECK(write(down[1], "d", 1) == 1, "write");
	wait_child(pid, "fork");
	EXPECT(&live, "the parent after the fork");
	/* The parent's stream goes on. */
	map_line(&s, W_FPUTS, 0, CODE(12, 0x200), 0x100, "parent 3", 1, &live);
	CHECK(!wp_fclose(s.fp), "fclose");
	model_clear(&child);
	free(child.v);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	test_end();
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * 200,000 live ranges, written in random order, then big ranges that
 * each replace a run of them: the bridge's tree keeps up.
 */
#define SCALE_N		200000
#define SCALE_BIG	2000
#define SCALE_RUN	50

static void t_scale(void)
{
	static unsigned char alive[SCALE_N];
	static uint32_t order[SCALE_N], slot_len[SCALE_N];
	struct { uint64_t addr, len; bool alive; } *big;
	struct model got = { 0 };
	struct timespec t0, t1;
	uint64_t seed = 42, base = CODE(13, 0);
	size_t i, j, nr_live = 0;
	char text[128];
	double secs;
	FILE *fp;

	test_begin("scale-200000-live-ranges");
	big = calloc(SCALE_BIG, sizeof(*big));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fp = must_fopen(path_of("scale", "perf-%d.map", getpid()), "w");
	for (i = 0; i < SCALE_N; i++)
		order[i] = i;
	for (i = SCALE_N - 1; i > 0; i--) {
		uint32_t t;

		j = xorshift(&seed) % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < SCALE_N; i++) {
		uint32_t k = order[i];

		slot_len[k] = 0x80 + xorshift(&seed) % 0x80;
		snprintf(text, sizeof(text), "%lx %x fn%u\n",
			 (unsigned long)(base + k * 0x100ULL), slot_len[k], k);
		fputs(text, fp);
		alive[k] = 1;
	}
	for (i = 0; i < SCALE_BIG; i++) {
		uint64_t a = xorshift(&seed) % (SCALE_N - SCALE_RUN);

		big[i].addr = base + a * 0x100 + 0x40;
		big[i].len = SCALE_RUN * 0x100 - 0x40;
		big[i].alive = true;
		for (j = a; j <= a + SCALE_RUN - 1 + 1 && j < SCALE_N; j++)
			if (base + j * 0x100 < big[i].addr + big[i].len &&
			    big[i].addr < base + j * 0x100 + slot_len[j])
				alive[j] = 0;
		for (j = 0; j < i; j++)
			if (big[j].alive && big[j].addr < big[i].addr + big[i].len &&
			    big[i].addr < big[j].addr + big[j].len)
				big[j].alive = false;
		snprintf(text, sizeof(text), "%lx %lx big%zu\n",
			 (unsigned long)big[i].addr, (unsigned long)big[i].len,
			 i);
		fputs(text, fp);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	/* A sorted array would need minutes; the tree well under one. */
	CHECK(secs < 20, "%.1f s for %d loads", secs, SCALE_N + SCALE_BIG);
	for (i = 0; i < SCALE_N; i++)
		nr_live += alive[i];
	for (i = 0; i < SCALE_BIG; i++)
		nr_live += big[i].alive;
	if (bridged) {
		CHECK(!registry_read(getpid(), &got), "read the registry");
		/* Everything else is live from the earlier tests. */
		CHECK(got.nr == nr_live + live.nr, "registry %zu, expected %zu",
		      got.nr, nr_live + live.nr);
		for (i = 0; i < got.nr; i++) {
			struct entry *e = &got.v[i];
			unsigned long k;

			if (e->addr < base || e->addr >= CODE(14, 0))
				continue;
			if (sscanf(e->name, "fn%lu", &k) == 1) {
				CHECK(k < SCALE_N && alive[k] &&
				      e->addr == base + k * 0x100ULL &&
				      e->len == slot_len[k], "%s", e->name);
			} else if (sscanf(e->name, "big%lu", &k) == 1) {
				CHECK(k < SCALE_BIG && big[k].alive &&
				      e->addr == big[k].addr &&
				      e->len == big[k].len, "%s", e->name);
			} else {
				CHECK(0, "unexpected %s", e->name);
			}
			if (test_failures > 10)
				break;
		}
		model_clear(&got);
		free(got.v);
	}
	CHECK(!wp_fclose(fp), "fclose");
	free(big);
	test_end();
}

static void mode_seq(void)
{
	t_map_file_calls();
	t_map_fields();
	t_map_reuse();
	t_map_append();
	t_map_fd_calls();
	t_jit_file_calls();
	t_jit_fd_calls();
	t_both_files();
	t_open_calls();
	t_not_ours();
	t_lifecycle();
	t_fortify_flag();
	t_fork();
	/* Last: its code stays live, and no model of the others has it. */
	t_scale();
}

/*
 * Threads: four writers share a perf map (FILE, lines in pieces under
 * flockfile, as QEMU), a jitdump (records in pieces, as perf's JVMTI
 * agent) and an fd map (one write per line), while a fifth flushes.
 * Each writes in its own region, so its model is its own.
 */
#define NR_WRITERS	4
#define PER_WRITER	2500

struct shared {
	struct sink	map, dump, fdmap;
	struct model	models[NR_WRITERS];
	int		done;
};

struct writer {
	struct shared	*sh;
	int		id;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct shared *sh = w->sh;
	struct model *m = &sh->models[w->id];
	uint64_t seed = 0x1234 + w->id;
	char name[64], text[128];
	int i;

	for (i = 0; i < PER_WRITER; i++) {
		uint64_t addr = CODE(20 + w->id, (xorshift(&seed) % 512) * 0x100);
		uint64_t len = 0x40 + xorshift(&seed) % 0x200;
		int meth = xorshift(&seed) % W_NR_FILE;

		snprintf(name, sizeof(name), "t%d fn %d", w->id, i);
		switch (i % 3) {
		case 0:
			snprintf(text, sizeof(text), "%lx %lx %s\n",
				 (unsigned long)addr, (unsigned long)len, name);
			flockfile(sh->map.fp);
			put(&sh->map, meth, text, 7);
			put(&sh->map, meth, text + 7, strlen(text) - 7);
			funlockfile(sh->map.fp);
			break;
		case 1: {
			struct jload r = {
				.p = { JIT_CODE_LOAD,
				       sizeof(r) + strlen(name) + 1 + 8, 1 },
				.code_addr = addr, .code_size = len,
			};

			flockfile(sh->dump.fp);
			put(&sh->dump, W_FWRITE_UNLOCKED, &r, sizeof(r));
			put(&sh->dump, meth, name, strlen(name) + 1);
			put(&sh->dump, W_FWRITE_UNLOCKED, code_bytes, 8);
			funlockfile(sh->dump.fp);
			break;
		}
		default:
			snprintf(text, sizeof(text), "%lx %lx %s\n",
				 (unsigned long)addr, (unsigned long)len, name);
			put(&sh->fdmap, W_WRITE, text, strlen(text));
			break;
		}
		model_load(m, addr, len, name);
	}
	return NULL;
}

static void *flusher_main(void *arg)
{
	struct shared *sh = arg;
	unsigned int i = 0;

	while (!__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE)) {
		switch (i++ % 3) {
		case 0:
			wp_fflush(sh->map.fp);
			break;
		case 1:
			wp_fflush(NULL);
			break;
		default:
			flockfile(sh->dump.fp);
			wp_fflush_unlocked(sh->dump.fp);
			funlockfile(sh->dump.fp);
			break;
		}
		usleep(200);
	}
	return NULL;
}

static void mode_threads(void)
{
	struct writer w[NR_WRITERS];
	pthread_t tid[NR_WRITERS], flusher;
	struct shared sh = { .done = 0 };
	struct model all = { 0 };
	size_t i, j;
	int fd;

	test_begin("four-writers-one-flusher");
	sh.map.fd = -1;
	sh.dump.fd = -1;
	sh.map.fp = must_fopen(path_of("map", "perf-%d.map", getpid()), "w");
	fd = wp_open(path_of("dump", "jit-%d.dump", getpid()),
		     O_CREAT | O_TRUNC | O_RDWR, 0644);
	sh.dump.fp = wp_fdopen(fd, "w+");
	jit_header(&sh.dump, W_FWRITE, 0, 1, &all);
	sh.fdmap.fp = NULL;
	sh.fdmap.fd = wp_open(path_of("fd", "perf-%d.map", getpid()),
			      O_WRONLY | O_CREAT | O_TRUNC, 0644);
	pthread_create(&flusher, NULL, flusher_main, &sh);
	for (i = 0; i < NR_WRITERS; i++) {
		w[i] = (struct writer){ &sh, i };
		pthread_create(&tid[i], NULL, writer_main, &w[i]);
	}
	for (i = 0; i < NR_WRITERS; i++)
		pthread_join(tid[i], NULL);
	__atomic_store_n(&sh.done, 1, __ATOMIC_RELEASE);
	pthread_join(flusher, NULL);
	for (i = 0; i < NR_WRITERS; i++)
		for (j = 0; j < sh.models[i].nr; j++)
			model_add(&all, sh.models[i].v[j].addr,
				  sh.models[i].v[j].len, sh.models[i].v[j].name,
				  strlen(sh.models[i].v[j].name));
	EXPECT(&all, "all writers");
	CHECK(!wp_fclose(sh.map.fp), "fclose");
	CHECK(!wp_fclose(sh.dump.fp), "fclose");
	CHECK(!wp_close(sh.fdmap.fd), "close");
	EXPECT(&all, "closing");
	test_end();
}

/*
 * stderr reopened onto the perf map: the bridge's own messages, and
 * libperfinject's, must not land in it, nor call back into the hooks.
 */
static void mode_reentry(void)
{
	struct sink s = { .fd = -1 };
	char *path, *text, name[64];
	struct model here = { 0 };
	size_t len;
	int m;

	test_begin("stderr-is-the-map");
	path = strdup(path_of("reentry", "perf-%d.map", getpid()));
	s.fp = wp_freopen(path, "w", stderr);
	CHECK(s.fp == stderr, "freopen: %s", strerror(errno));
	for (m = 0; m < W_NR_FILE; m++) {
		snprintf(name, sizeof(name), "stderr %s", w_names[m]);
		map_line(&s, m, 0, CODE(30, m * 0x100), 0x80, name, 2, &here);
	}
	CHECK(!wp_fflush(stderr), "fflush");
	text = slurp(path, &len);
	CHECK(text && !strstr(text, "perfinject"),
	      "a message went into the map: %s", text);
	free(text);
	free(path);
	test_end();
}

/* Lines of the bridge's self-check message in @path. */
static int count_messages(const char *path)
{
	size_t len;
	char *text = slurp(path, &len), *p;
	int n = 0;

	for (p = text; p && (p = strstr(p, "calls the bridge does not see")); p++)
		n++;
	free(text);
	return n;
}

/*
 * Bytes written where no hook sees them: putc_unlocked() inlined by an
 * optimising build, a raw write(2) on the fd. After the next fflush (or
 * close, for an fd), the registry is right again, and the bridge said
 * so once per file.
 */
static void mode_selfcheck(void)
{
	struct sink s = { .fd = -1 };
	struct model here = { 0 };
	char *log, line[128];
	int fd, msgs;

	log = strdup(path_of("selfcheck", "stderr-%d.txt", getpid()));
	fd = syscall(SYS_openat, AT_FDCWD, log, O_WRONLY | O_CREAT | O_TRUNC,
		     0644);
	dup2(fd, 2);
	syscall(SYS_close, fd);

	test_begin("inline-putc_unlocked");
	s.fp = must_fopen(path_of("selfcheck-a", "perf-%d.map", getpid()), "w");
	map_line(&s, W_FPUTS, 0, CODE(31, 0x000), 0x10, "seen 1", 1, &here);
	/* A whole line the bridge cannot see. */
	wi_putc_unlocked(s.fp, "7f1f00000100 10 unseen 2\n");
	map_line(&s, W_FPUTS, 0, CODE(31, 0x200), 0x10, "seen 3", 1, &here);
	model_load(&here, CODE(31, 0x100), 0x10, "unseen 2");
	CHECK(!wp_fflush(s.fp), "fflush");
	EXPECT(&here, "fflush after an unseen line");
	/*
	 * Unseen bytes in the middle of a line, and small fwrites: the
	 * bridge sees a garbled line, and the flush puts it right.
	 */
	put_text(&s, W_FPUTS, "7f1f00000300 10 na");
	wi_putc_unlocked(s.fp, "me 4\n");
	wi_fwrite_unlocked8(s.fp, "7f1f00000400 10 unseen 5\n");
	put_text(&s, W_FPUTS, "7f1f00000500 10 seen 6\n");
	model_load(&here, CODE(31, 0x500), 0x10, "seen 6");
	model_load(&here, CODE(31, 0x300), 0x10, "name 4");
	model_load(&here, CODE(31, 0x400), 0x10, "unseen 5");
	CHECK(!wp_fflush(s.fp), "fflush");
	EXPECT(&here, "fflush after unseen bytes within lines");
	CHECK(!wp_fclose(s.fp), "fclose");
	msgs = count_messages(log);
	CHECK(msgs == (bridged ? 1 : 0), "%d messages", msgs);
	test_end();

	test_begin("raw-write-append-FILE");
	s.fp = must_fopen(path_of("selfcheck-b", "perf-%d.map", getpid()), "a");
	map_line(&s, W_FPRINTF, 0, CODE(31, 0x1000), 0x10, "seen 7", 1, &here);
	CHECK(!wp_fflush(s.fp), "fflush");
	snprintf(line, sizeof(line), "%lx 10 unseen 8\n",
		 (unsigned long)CODE(31, 0x1100));
	syscall(SYS_write, fileno(s.fp), line, strlen(line));
	map_line(&s, W_FPRINTF, 0, CODE(31, 0x1200), 0x10, "seen 9", 1, &here);
	model_load(&here, CODE(31, 0x1100), 0x10, "unseen 8");
	CHECK(!wp_fflush(s.fp), "fflush");
	EXPECT(&here, "fflush after a raw write");
	CHECK(!wp_fclose(s.fp), "fclose");
	msgs = count_messages(log);
	CHECK(msgs == (bridged ? 2 : 0), "%d messages", msgs);
	test_end();

	test_begin("raw-write-fd-until-close");
	s.fp = NULL;
	s.fd = wp_open(path_of("selfcheck-c", "perf-%d.map", getpid()),
		       O_WRONLY | O_CREAT | O_TRUNC, 0644);
	map_line(&s, W_WRITE, 0, CODE(31, 0x2000), 0x10, "seen 10", 1, &here);
	snprintf(line, sizeof(line), "%lx 10 unseen 11\n",
		 (unsigned long)CODE(31, 0x2100));
	syscall(SYS_write, s.fd, line, strlen(line));
	map_line(&s, W_WRITE, 0, CODE(31, 0x2200), 0x10, "seen 12", 1, &here);
	model_load(&here, CODE(31, 0x2100), 0x10, "unseen 11");
	CHECK(!wp_close(s.fd), "close");
	EXPECT(&here, "close after a raw write");
	msgs = count_messages(log);
	CHECK(msgs == (bridged ? 3 : 0), "%d messages", msgs);
	test_end();
	free(log);
}

/*
 * Hostile jitdumps: a huge name, a huge record, records that cannot be
 * framed. The bridge bounds what it keeps and stops following a file it
 * cannot frame, saying so once.
 */
static void mode_hostile(void)
{
	static char huge[1 << 20];
	struct sink s = { .fd = -1 };
	struct model here = { 0 };
	struct mallinfo2 a, b;
	char *log;
	int fd, msgs;

	log = strdup(path_of("hostile", "stderr-%d.txt", getpid()));
	fd = syscall(SYS_openat, AT_FDCWD, log, O_WRONLY | O_CREAT | O_TRUNC,
		     0644);
	dup2(fd, 2);
	syscall(SYS_close, fd);

	test_begin("huge-name-and-record");
	s.fp = must_fopen(path_of("hostile-a", "jit-%d.dump", getpid()), "w");
	jit_header(&s, W_FWRITE, 0, 1, &here);
	jit_load(&s, W_FWRITE, CODE(40, 0), 0x10, "warm up", 0, 1, &here);
	a = mallinfo2();
	memset(huge, 'h', sizeof(huge) - 1);
	jit_load(&s, W_FWRITE, CODE(40, 0x100), 0x10, huge, 0, 1, &here);
	{
		struct jprefix p = { 77, 0xfffffff0, 1 };

		CHECK(!put(&s, W_FWRITE, &p, sizeof(p)), "fwrite");
		/* Inside that record: never parsed. */
		jit_load(&s, W_FWRITE, CODE(40, 0x200), 0x10, "inside", 0, 1,
			 NULL);
		CHECK(!put(&s, W_FWRITE, huge, sizeof(huge)), "fwrite");
	}
	EXPECT(&here, "inside a huge record");
	b = mallinfo2();
	CHECK(b.uordblks < a.uordblks + 64 * 1024,
	      "the heap grew by %zu bytes", b.uordblks - a.uordblks);
	CHECK(!wp_fclose(s.fp), "fclose");
	test_end();

	test_begin("unframeable-records");
	{
		struct jprefix bad = { 0, 8, 1 };

		s.fp = must_fopen(path_of("hostile-b", "jit-%d.dump",
					  getpid()), "w");
		jit_header(&s, W_FWRITE, 0, 1, &here);
		CHECK(!put(&s, W_FWRITE, &bad, sizeof(bad)), "fwrite");
		/* A good record after it is lost: nothing can find it. */
		jit_load(&s, W_FWRITE, CODE(40, 0x300), 0x10, "lost", 0, 1,
			 NULL);
		EXPECT(&here, "after a record of 8 bytes");
		CHECK(!wp_fclose(s.fp), "fclose");
	}
	{
		struct jheader h = { .magic = 0x4454694A, .total_size = 40 };

		s.fp = must_fopen(path_of("hostile-c", "jit-%d.dump",
					  getpid()), "w");
		CHECK(!put(&s, W_FWRITE, &h, sizeof(h)), "fwrite");
		jit_load(&s, W_FWRITE, CODE(40, 0x400), 0x10, "swapped", 0, 1,
			 NULL);
		EXPECT(&here, "after a byte-swapped header");
		CHECK(!wp_fclose(s.fp), "fclose");
	}
	{
		struct jheader h = { .magic = 0x12345678, .total_size = 40 };

		s.fp = must_fopen(path_of("hostile-d", "jit-%d.dump",
					  getpid()), "w");
		CHECK(!put(&s, W_FWRITE, &h, sizeof(h)), "fwrite");
		CHECK(!put(&s, W_FWRITE, &h, sizeof(h)), "fwrite");
		EXPECT(&here, "after a bad magic");
		CHECK(!wp_fclose(s.fp), "fclose");
	}
	msgs = 0;
	{
		size_t len;
		char *text = slurp(log, &len), *p;

		for (p = text; p && (p = strstr(p, "stopped forwarding")); p++)
			msgs++;
		free(text);
	}
	CHECK(msgs == (bridged ? 3 : 0), "%d messages", msgs);
	test_end();
	free(log);
}

/*
 * A process that opens no map allocates nothing for the bridge: the
 * driver compares "inert" between runs with and without it, and
 * "active" must grow with it.
 */
static void mode_inert(void)
{
	static const char line[] = "7f2800000000 10 not a map\n";
	struct mallinfo2 a, b;
	struct sink s = { .fd = -1 };
	struct model here = { 0 };
	FILE *fp[3];
	int fd[3], i;

	printf("warming up stdout\n");
	a = mallinfo2();
	fd[0] = wp_open(path_of("inert", "a-%d", getpid()),
			O_WRONLY | O_CREAT, 0644);
	fd[1] = wl_open(path_of("inert", "perf-%d.txt", getpid()), O_WRONLY,
			0644);
	fd[2] = wp_creat(path_of("inert", "jit-%d.dmp", getpid()), 0644);
	fp[0] = wp_fopen(path_of("inert", "b-%d", getpid()), "w");
	fp[1] = wl_fopen(path_of("inert", "c-%d", getpid()), "a");
	fp[2] = wp_fdopen(wp_dup2(fd[0], 100), "w");
	for (i = 0; i < 3; i++) {
		write(fd[i], line, sizeof(line) - 1);
		dprintf(fd[i], "%s", line);
		fputs(line, fp[i]);
		fprintf(fp[i], "%s", line);
		wf_line_file(fp[i], W_FPRINTF_CHK, "%lx %lx %s\n", 1, 2, "x");
		fflush(fp[i]);
	}
	b = mallinfo2();
	printf("inert %zu\n", b.uordblks - a.uordblks);
	for (i = 0; i < 3; i++) {
		wp_close(fd[i]);
		wp_fclose(fp[i]);
	}
	a = mallinfo2();
	s.fp = must_fopen(path_of("inert", "perf-%d.map", getpid()), "w");
	map_line(&s, W_FPUTS, 0, CODE(50, 0), 0x10, "now a map", 1, &here);
	b = mallinfo2();
	printf("active %zu\n", b.uordblks - a.uordblks);
	wp_fclose(s.fp);
	test_begin("registry-holds-the-map");
	EXPECT(&here, "the map");
	test_end();
}

/*
 * No-files mode (PERFINJECT_BRIDGE_NO_FILES=1): the runtime's files and
 * V8's log are memory files, forwarded as ever; the pages of what the
 * bridge has read go back, so memory stays bounded however much the
 * runtime writes. Run with the bridge only.
 */
#define NOFILES_SLOTS	1000
#define NOFILES_BOUND	(1024 * 1024)

static void nofiles_check(const char *path, int fd, const char *memname,
			  uint64_t size)
{
	char link[64], target[PATH_MAX], want[64];
	struct stat st;
	ssize_t n;

	CHECK(access(path, F_OK) && errno == ENOENT, "%s exists", path);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	snprintf(want, sizeof(want), "/memfd:%s (deleted)", memname);
	CHECK(!strcmp(target, want), "fd %d is %s, want %s", fd, target, want);
	CHECK(!fstat(fd, &st), "fstat");
	CHECK((uint64_t)st.st_size == size, "size %lld, wrote %llu",
	      (long long)st.st_size, (unsigned long long)size);
	CHECK((uint64_t)st.st_blocks * 512 <= NOFILES_BOUND,
	      "%s holds %llu bytes of memory after %llu written", memname,
	      (unsigned long long)st.st_blocks * 512,
	      (unsigned long long)size);
}

static void mode_nofiles(void)
{
	const char *env = getenv("PERFINJECT_BRIDGE_NO_FILES");
	struct sink s = { .fd = -1 };
	struct model here = { 0 };
	char name[128], memname[64], *path;
	uint64_t size = 0;
	void *marker;
	FILE *other;
	int i, n;

	test_begin("environment");
	CHECK(bridged && env && !strcmp(env, "1"),
	      "run with the bridge and PERFINJECT_BRIDGE_NO_FILES=1");
	test_end();
	if (test_failures)
		return;

	/* V8's --perf-basic-prof: fopen, line-buffered, vfprintf. */
	test_begin("map-in-memory");
	path = strdup(path_of("nofiles", "perf-%d.map", getpid()));
	s.fp = wp_fopen(path, "w+");
	CHECK(s.fp, "fopen: %s", strerror(errno));
	if (!s.fp)
		goto map_done;
	setvbuf(s.fp, NULL, _IOLBF, 0);
	for (i = 0; i < 50000; i++) {
		uint64_t addr = CODE(20, (i % NOFILES_SLOTS) * 0x100);

		snprintf(name, sizeof(name), "JS:*gen_%d /app/z.js:1:1", i);
		n = put_line_printf(&s, W_VFPRINTF, styles[0], addr, 0x80,
				    name);
		CHECK(!n, "vfprintf failed");
		size += snprintf(NULL, 0, styles[0], addr, 0x80UL, name);
		model_load(&here, addr, 0x80, name);
	}
	EXPECT(&here, "50,000 lines in 1,000 places");
	snprintf(memname, sizeof(memname), "perf-%d.map", getpid());
	nofiles_check(path, fileno(s.fp), memname, size);
	CHECK(!wp_fclose(s.fp), "fclose");
	EXPECT(&here, "fclose");
map_done:
	free(path);
	test_end();

	/* V8's --perf-prof: open, the marker mapping, fdopen, fwrite. */
	test_begin("jitdump-in-memory");
	path = strdup(path_of("nofiles", "jit-%d.dump", getpid()));
	s.fd = wp_open(path, O_CREAT | O_TRUNC | O_RDWR, 0666);
	CHECK(s.fd >= 0, "open: %s", strerror(errno));
	if (s.fd < 0)
		goto dump_done;
	marker = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, s.fd,
		      0);
	CHECK(marker != MAP_FAILED, "marker mmap: %s", strerror(errno));
	s.fp = wp_fdopen(s.fd, "w+");
	jit_header(&s, W_FWRITE, 0, 1, &here);
	size = sizeof(struct jheader);
	for (i = 0; i < 20000; i++) {
		uint64_t addr = CODE(21, (i % NOFILES_SLOTS) * 0x100);

		snprintf(name, sizeof(name), "JS:*jit_%d /app/z.js:1:1", i);
		jit_load(&s, W_FWRITE, addr, 0x80, name, sizeof(code_bytes), 1,
			 NULL);
		size += sizeof(struct jload) + strlen(name) + 1 +
			sizeof(code_bytes);
		model_load(&here, addr, 0x80, name);
	}
	CHECK(!wp_fflush(s.fp), "fflush");
	EXPECT(&here, "20,000 records in 1,000 places");
	snprintf(memname, sizeof(memname), "jit-%d.dump", getpid());
	nofiles_check(path, s.fd, memname, size);
	CHECK(!wp_fclose(s.fp), "fclose");
	if (marker != MAP_FAILED)
		munmap(marker, 4096);
dump_done:
	free(path);
	test_end();

	/* V8's log of an isolate, which its perf options turn on. */
	test_begin("v8-log-in-memory");
	snprintf(name, sizeof(name), "isolate-0x5599aabb-%d-v8.log", getpid());
	path = strdup(path_of("nofiles", name, 0));
	s.fp = wp_fopen(path, "w");
	CHECK(s.fp, "fopen: %s", strerror(errno));
	if (s.fp) {
		static const char ev[] = "new,MemoryChunk,0x2225c3300000,262144\n";

		for (size = 0; size < 8 * NOFILES_BOUND; size += sizeof(ev) - 1)
			CHECK(!wp_put_file(s.fp, W_FPUTS, ev, sizeof(ev) - 1),
			      "fputs");
		fflush(s.fp);
		nofiles_check(path, fileno(s.fp), "V8 log", size);
		wp_fclose(s.fp);
	}
	free(path);
	test_end();

	/* Other files, and another process's log, are files as ever. */
	test_begin("others-on-disk");
	snprintf(name, sizeof(name), "isolate-0x5599aabb-%d-v8.log",
		 getpid() + 1);
	path = strdup(path_of("nofiles", name, 0));
	other = wp_fopen(path, "w");
	CHECK(other && !access(path, F_OK), "%s not on disk", path);
	if (other)
		wp_fclose(other);
	free(path);
	path = strdup(path_of("nofiles", "perf-%d.txt", getpid()));
	other = wp_fopen(path, "w");
	CHECK(other && !access(path, F_OK), "%s not on disk", path);
	if (other)
		wp_fclose(other);
	free(path);
	EXPECT(&here, "others");
	test_end();
	model_clear(&here);
}

/* Print a jitdump's header and records, one per line, in hex. */
static int canon(const char *path)
{
	size_t len, at, i;
	char *buf = slurp(path, &len);
	uint32_t size;

	if (!buf)
		return 1;
	for (at = 0; at < len; at += size) {
		/* The header's size is at offset 8, a record's at 4. */
		if (len - at < 12)
			return 1;
		memcpy(&size, buf + at + (at ? 4 : 8), sizeof(size));
		if (size < 12 || size > len - at)
			return 1;
		for (i = 0; i < size; i++)
			printf("%02x", (unsigned char)buf[at + i]);
		putchar('\n');
	}
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} modes[] = {
		{ "seq", mode_seq },
		{ "threads", mode_threads },
		{ "reentry", mode_reentry },
		{ "selfcheck", mode_selfcheck },
		{ "hostile", mode_hostile },
		{ "inert", mode_inert },
		{ "nofiles", mode_nofiles },
	};
	size_t i;

	if (argc == 3 && !strcmp(argv[1], "canon"))
		return canon(argv[2]);
	if (argc < 3) {
		fprintf(stderr, "usage: %s MODE DIR [bridge] | canon FILE\n",
			argv[0]);
		return 2;
	}
	mode_name = argv[1];
	topdir = argv[2];
	mkdir(topdir, 0755);
	bridge_desc = dlsym(RTLD_DEFAULT, "perfinject_registry_descriptor");
	bridged = bridge_desc;
	/* A hung hook must fail the test, not the CI run. */
	alarm(120);
	test_begin("bridge-present");
	CHECK(bridged == (argc > 3 && !strcmp(argv[3], "bridge")),
	      "bridge %s", bridged ? "loaded" : "not loaded");
	if (test_failures) {
		test_end();
		return 1;
	}
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(modes[i].name, mode_name))
			break;
	if (i == sizeof(modes) / sizeof(modes[0])) {
		fprintf(stderr, "unknown mode %s\n", mode_name);
		return 2;
	}
	modes[i].fn();
	return nr_failed ? 1 : 0;
}
