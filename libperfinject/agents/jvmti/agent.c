// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * perfinject-jvmti: a JVMTI agent that reports the code HotSpot
 * generates through libperfinject.
 *
 *   java -agentpath:/path/libperfinject-jvmti.so[=OPTIONS] ...
 *   jcmd PID JVMTI.agent_load /path/libperfinject-jvmti.so [OPTIONS]
 *
 * OPTIONS is a comma-separated list (see README.md):
 *   backends=LIST  kernel, perfmap, jitdump, all or none, joined by '+'
 *   dir=PATH       directory of the perf-map and jitdump files
 *   strict         fail to load if a requested backend cannot be used
 *   verbose        log every load and unload to stderr (implies stats)
 *   stats          print counts and the CPU time spent in the agent at exit
 *   quiet          print nothing but errors
 *   rundown        when the agent is already active: report all live
 *                  code again, for a profiler that started since
 *   nolines        do not pass line tables (source lines, inlined frames)
 *   help           print the options and do nothing else
 *
 * Compiled methods are named "pkg.Class.method(signature)" with the JVM
 * signature, e.g. "java.lang.String.hashCode()I"; code HotSpot generates
 * outside a method (the interpreter, stubs, adapters) "[stub] NAME".
 * The code index of every load is the agent's sequence number of it.
 *
 * A compiled method comes with its line table: for every pc HotSpot
 * describes (compile_info's inline records, else the address map), the
 * chain of methods inlined there, innermost first, each at the source
 * line of its bytecode index (GetLineNumberTable) in its class's source
 * file (GetSourceFileName, under the package's directory). The jitdump
 * gets it as JIT_CODE_DEBUG_INFO, as perf's own libperf-jvmti writes it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jvmti.h>
#include <jvmticmlr.h>

#include <perfinject/perfinject.h>

#define PREFIX		"perfinject-jvmti: "
#define STUB_PREFIX	"[stub] "

enum {
	LOG_QUIET,
	LOG_DEFAULT,
	LOG_VERBOSE,
};

/* Errors that are reported once each, then only counted. */
enum {
	ERR_NAME,	/* a JVMTI call to name a method failed */
	ERR_LOAD,	/* perfinject__load() failed */
	ERR_UNLOAD,	/* perfinject__unload() failed */
	NR_ERR,
};

static const char *const err_what[NR_ERR] = {
	[ERR_NAME]	= "cannot name a compiled method",
	[ERR_LOAD]	= "cannot report code",
	[ERR_UNLOAD]	= "cannot report unloaded code",
};

struct agent_opts {
	unsigned int backends;
	bool backends_none;
	bool strict;
	bool stats;
	bool rundown;
	bool help;
	bool nolines;
	int log;
	char *dir;
};

/*
 * One agent per process: the JVM loads a library once however often it
 * is named, so a second Agent_OnLoad or Agent_OnAttach finds these set.
 */
static atomic_bool started;
static struct perfinject *pi;
static bool lines_on;
static jvmtiEnv *agent_jvmti;
static int log_level = LOG_DEFAULT;

/* Callbacks in flight, and whether the agent is shutting down. */
static atomic_int inflight;
static atomic_bool closing;

static atomic_uint_fast64_t next_index = 1;
static atomic_uint_fast64_t nr_methods, nr_stubs, nr_unloads, nr_dups;
static atomic_uint_fast64_t nr_replaced, nr_errors[NR_ERR];
/* With "stats": callbacks run and the thread CPU time they took. */
static bool stats;
static atomic_uint_fast64_t nr_calls, cpu_ns;

static void say(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(int level, const char *fmt, ...)
{
	char buf[PERFINJECT_NAME_MAX + 256];
	va_list ap;
	int n;

	if (log_level < level)
		return;
	memcpy(buf, PREFIX, sizeof(PREFIX) - 1);
	va_start(ap, fmt);
	n = vsnprintf(buf + sizeof(PREFIX) - 1,
		      sizeof(buf) - sizeof(PREFIX), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* One write per line, so lines of concurrent callbacks don't mix. */
	fprintf(stderr, "%s\n", buf);
}

/* Report the first error of each kind; count them all. */
static void error_once(int what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void error_once(int what, const char *fmt, ...)
{
	char buf[PERFINJECT_NAME_MAX + 128];
	va_list ap;

	if (atomic_fetch_add(&nr_errors[what], 1))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, PREFIX "%s: %s (further such errors are only "
		"counted)\n", err_what[what], buf);
}

static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Start a callback: false if the agent is shutting down. */
static bool enter(uint64_t *t0)
{
	if (stats)
		*t0 = thread_ns();
	atomic_fetch_add(&inflight, 1);
	if (atomic_load(&closing)) {
		atomic_fetch_sub(&inflight, 1);
		return false;
	}
	return true;
}

static void leave(uint64_t t0)
{
	if (stats) {
		atomic_fetch_add(&nr_calls, 1);
		atomic_fetch_add(&cpu_ns, thread_ns() - t0);
	}
	atomic_fetch_sub(&inflight, 1);
}

/*
 * Report [addr, addr + len) as @name. Code the registry already holds at
 * @addr with the same length and name is a duplicate (GenerateEvents
 * replays what the agent may have seen already) and is left alone; any
 * other code there is stale, so it is replaced.
 */
static void report_load(const char *name, uint64_t addr, uint64_t len,
			const struct perfinject_load_opts *lo,
			atomic_uint_fast64_t *counter)
{
	char old_name[PERFINJECT_NAME_MAX];
	struct perfinject_code old;
	uint64_t index;
	int err;

	index = atomic_fetch_add(&next_index, 1);
	err = perfinject__load_opts(pi, name, addr, len, index, lo);
	if (err == -EEXIST &&
	    !perfinject__find(pi, addr, &old, old_name, sizeof(old_name))) {
		if (old.len == len && !strcmp(old_name, name)) {
			atomic_fetch_add(&nr_dups, 1);
			say(LOG_VERBOSE, "dup    0x%" PRIx64 " %" PRIu64 " %s",
			    addr, len, name);
			return;
		}
		say(LOG_VERBOSE, "stale  0x%" PRIx64 " %" PRIu64 " %s",
		    addr, old.len, old_name);
		atomic_fetch_add(&nr_replaced, 1);
		perfinject__unload(pi, addr);
		err = perfinject__load_opts(pi, name, addr, len, index, lo);
	}
	if (err) {
		error_once(ERR_LOAD, "%s at 0x%" PRIx64 ": %s", name, addr,
			   strerror(-err));
		return;
	}
	atomic_fetch_add(counter, 1);
	say(LOG_VERBOSE, "load   0x%" PRIx64 " %" PRIu64 " %" PRIu64 " %s",
	    addr, len, index, name);
}

/* "Ljava/lang/String;" to "java.lang.String". */
static void class_name(char *dst, size_t size, const char *sig)
{
	size_t i, n = strlen(sig);

	if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') {
		sig++;
		n -= 2;
	}
	if (n >= size)
		n = size - 1;
	for (i = 0; i < n; i++)
		dst[i] = sig[i] == '/' ? '.' : sig[i];
	dst[n] = 0;
}

static void deallocate(jvmtiEnv *jvmti, char *p)
{
	if (p)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)p);
}

/* "pkg.Class.method(signature)" into @buf; false on a JVMTI error. */
static bool method_name(jvmtiEnv *jvmti, jmethodID method, char *buf,
			size_t size)
{
	char *name = NULL, *sig = NULL, *csig = NULL;
	char cname[PERFINJECT_NAME_MAX];
	jvmtiError e;
	jclass klass;
	bool ok = false;

	e = (*jvmti)->GetMethodName(jvmti, method, &name, &sig, NULL);
	if (e != JVMTI_ERROR_NONE) {
		error_once(ERR_NAME, "GetMethodName: JVMTI error %d", e);
		return false;
	}
	e = (*jvmti)->GetMethodDeclaringClass(jvmti, method, &klass);
	if (e != JVMTI_ERROR_NONE) {
		error_once(ERR_NAME, "GetMethodDeclaringClass: JVMTI error %d",
			   e);
		goto out;
	}
	e = (*jvmti)->GetClassSignature(jvmti, klass, &csig, NULL);
	if (e != JVMTI_ERROR_NONE) {
		error_once(ERR_NAME, "GetClassSignature: JVMTI error %d", e);
		goto out;
	}
	class_name(cname, sizeof(cname), csig);
	/* Truncated if need be: a long name still names the code. */
	if (snprintf(buf, size, "%s.%s%s", cname, name, sig) >= (int)size)
		say(LOG_VERBOSE, "name truncated: %s", buf);
	ok = true;
out:
	deallocate(jvmti, csig);
	deallocate(jvmti, sig);
	deallocate(jvmti, name);
	return ok;
}

/* One method's place in the source: its file and line table. */
struct src_method {
	jmethodID		method;
	char			*file;		/* "pkg/File.java", malloc'd */
	jvmtiLineNumberEntry	*table;		/* JVMTI-allocated */
	jint			nr;
};

struct src_cache {
	struct src_method	*m;
	int			nr;
	int			cap;
};

/* "Lpkg/Class;" and "File.java" to "pkg/File.java". */
static char *source_path(const char *csig, const char *file)
{
	const char *slash;
	size_t dir = 0;
	char *p;

	if (csig[0] == 'L' && (slash = strrchr(csig, '/')))
		dir = slash - csig;	/* "Lpkg" */
	p = malloc(dir + strlen(file) + 2);
	if (!p)
		return NULL;
	if (dir)
		sprintf(p, "%.*s/%s", (int)dir - 1, csig + 1, file);
	else
		strcpy(p, file);
	return p;
}

static struct src_method *src_lookup(jvmtiEnv *jvmti, struct src_cache *c,
				     jmethodID method)
{
	char *file = NULL, *csig = NULL;
	struct src_method *m;
	jclass klass;
	int i;

	for (i = 0; i < c->nr; i++)
		if (c->m[i].method == method)
			return &c->m[i];
	if (c->nr == c->cap) {
		int cap = c->cap ? 2 * c->cap : 8;
		struct src_method *n = realloc(c->m, cap * sizeof(*n));

		if (!n)
			return NULL;
		c->m = n;
		c->cap = cap;
	}
	m = &c->m[c->nr];
	memset(m, 0, sizeof(*m));
	m->method = method;
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, method, &klass) ||
	    (*jvmti)->GetClassSignature(jvmti, klass, &csig, NULL) ||
	    (*jvmti)->GetSourceFileName(jvmti, klass, &file) ||
	    (*jvmti)->GetLineNumberTable(jvmti, method, &m->nr, &m->table)) {
		/* Native, abstract, or compiled without -g:lines. */
		m->nr = 0;
		m->table = NULL;
	} else {
		m->file = source_path(csig, file);
	}
	deallocate(jvmti, csig);
	deallocate(jvmti, file);
	c->nr++;
	return m;
}

static void src_free(jvmtiEnv *jvmti, struct src_cache *c)
{
	int i;

	for (i = 0; i < c->nr; i++) {
		free(c->m[i].file);
		deallocate(jvmti, (char *)c->m[i].table);
	}
	free(c->m);
}

/* The line of @bci: the last table entry that starts at or before it. */
static uint32_t src_line(const struct src_method *m, jint bci)
{
	uint32_t line = 0;
	jlocation best = -1;
	int i;

	for (i = 0; i < m->nr; i++)
		if (m->table[i].start_location <= bci &&
		    m->table[i].start_location > best) {
			best = m->table[i].start_location;
			line = m->table[i].line_number;
		}
	return line;
}

struct line_table {
	struct perfinject_line	*rows;
	struct perfinject_frame	*frames;
	size_t			nr_rows;
	size_t			nr_frames;
	char			**names;	/* inlined methods' names */
	size_t			nr_names;
};

static int cmp_row(const void *a, const void *b)
{
	const struct perfinject_line *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * The line table of a compiled method from the inline records of
 * @compile_info (every pc with its chain of inlined methods), else from
 * the address map (one method). Rows outside the code, without a known
 * line, or at an address a row already has, are left out.
 */
static void build_lines(jvmtiEnv *jvmti, jmethodID method, uint64_t addr,
			uint64_t len, jint map_length,
			const jvmtiAddrLocationMap *map,
			const void *compile_info, struct line_table *t)
{
	const jvmtiCompiledMethodLoadRecordHeader *h = compile_info;
	const jvmtiCompiledMethodLoadInlineRecord *inl = NULL;
	struct src_cache cache = { 0 };
	size_t nr_pcs, frames_max = 0, i, j, k;

	memset(t, 0, sizeof(*t));
	for (; h; h = h->next)
		if (h->kind == JVMTI_CMLR_INLINE_INFO) {
			inl = (const void *)h;
			break;
		}
	nr_pcs = inl ? (size_t)inl->numpcs : map ? (size_t)map_length : 0;
	if (!nr_pcs)
		return;
	for (i = 0; i < nr_pcs; i++)
		frames_max += inl ? (size_t)inl->pcinfo[i].numstackframes : 1;
	t->rows = calloc(nr_pcs, sizeof(*t->rows));
	t->frames = calloc(frames_max, sizeof(*t->frames));
	t->names = calloc(frames_max, sizeof(*t->names));
	if (!t->rows || !t->frames || !t->names)
		goto out;
	for (i = 0; i < nr_pcs; i++) {
		uint64_t pc = inl ? (uintptr_t)inl->pcinfo[i].pc :
				    (uintptr_t)map[i].start_address;
		size_t depth = inl ? (size_t)inl->pcinfo[i].numstackframes : 1;
		struct perfinject_frame *f = &t->frames[t->nr_frames];
		size_t n = 0;

		if (pc < addr || pc - addr >= len || !depth)
			continue;
		for (j = 0; j < depth; j++) {
			jmethodID m = inl ? inl->pcinfo[i].methods[j] : method;
			jint bci = inl ? inl->pcinfo[i].bcis[j] :
					 (jint)map[i].location;
			struct src_method *s = src_lookup(jvmti, &cache, m);
			char name[PERFINJECT_NAME_MAX];

			if (!s || !s->file)
				break;
			f[n] = (struct perfinject_frame){
				.file = s->file,
				.line = src_line(s, bci),
			};
			/* Inlined frames name their method. */
			if (j + 1 < depth &&
			    method_name(jvmti, m, name, sizeof(name))) {
				t->names[t->nr_names] = strdup(name);
				f[n].function = t->names[t->nr_names];
				if (f[n].function)
					t->nr_names++;
			}
			n++;
		}
		if (n != depth || !f[0].line)
			continue;
		t->rows[t->nr_rows++] = (struct perfinject_line){
			.addr = pc, .frames = f, .nr_frames = n,
		};
		t->nr_frames += n;
	}
	qsort(t->rows, t->nr_rows, sizeof(*t->rows), cmp_row);
	for (i = k = 0; i < t->nr_rows; i++)
		if (!k || t->rows[i].addr != t->rows[k - 1].addr)
			t->rows[k++] = t->rows[i];
	t->nr_rows = k;
	/* The file names live in the cache: keep them with the table. */
	for (i = 0; i < (size_t)cache.nr; i++) {
		char **n = realloc(t->names, (t->nr_names + 1) *
				   sizeof(*n));

		if (!n)
			break;
		t->names = n;
		t->names[t->nr_names++] = cache.m[i].file;
		cache.m[i].file = NULL;
	}
out:
	src_free(jvmti, &cache);
}

static void free_lines(struct line_table *t)
{
	size_t i;

	for (i = 0; i < t->nr_names; i++)
		free(t->names[i]);
	free(t->names);
	free(t->frames);
	free(t->rows);
}

static void JNICALL
cb_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
			const void *code_addr, jint map_length,
			const jvmtiAddrLocationMap *map,
			const void *compile_info)
{
	char name[PERFINJECT_NAME_MAX];
	struct line_table t = { 0 };
	uint64_t t0 = 0;

	if (code_size <= 0 || !enter(&t0))
		return;
	if (method_name(jvmti, method, name, sizeof(name))) {
		PERFINJECT_LOAD_OPTS(lo, .kind = PERFINJECT_KIND_FUNCTION);

		if (lines_on) {
			build_lines(jvmti, method, (uintptr_t)code_addr,
				    code_size, map_length, map, compile_info,
				    &t);
			lo.lines = t.rows;
			lo.nr_lines = t.nr_rows;
		}
		report_load(name, (uintptr_t)code_addr, code_size, &lo,
			    &nr_methods);
		free_lines(&t);
	}
	leave(t0);
}

static void JNICALL
cb_compiled_method_unload(jvmtiEnv *jvmti, jmethodID method,
			  const void *code_addr)
{
	uint64_t addr = (uintptr_t)code_addr, t0 = 0;
	int err;

	/* The method may belong to an unloaded class: only the address. */
	(void)jvmti;
	(void)method;
	if (!enter(&t0))
		return;
	err = perfinject__unload(pi, addr);
	if (!err) {
		atomic_fetch_add(&nr_unloads, 1);
		say(LOG_VERBOSE, "unload 0x%" PRIx64, addr);
	} else if (err == -ENOENT) {
		/* Loaded before a late attach and not replayed: nothing. */
		say(LOG_VERBOSE, "unload 0x%" PRIx64 " (not known)", addr);
	} else {
		error_once(ERR_UNLOAD, "0x%" PRIx64 ": %s", addr,
			   strerror(-err));
	}
	leave(t0);
}

static void JNICALL
cb_dynamic_code_generated(jvmtiEnv *jvmti, const char *name,
			  const void *address, jint length)
{
	PERFINJECT_LOAD_OPTS(lo, .kind = PERFINJECT_KIND_STUB);
	char buf[PERFINJECT_NAME_MAX];
	uint64_t t0 = 0;

	(void)jvmti;
	if (length <= 0 || !enter(&t0))
		return;
	if (name && !strcmp(name, "Interpreter"))
		lo.kind = PERFINJECT_KIND_INTERPRETER;
	if (snprintf(buf, sizeof(buf), STUB_PREFIX "%s",
		     name && name[0] ? name : "unnamed") >= (int)sizeof(buf))
		say(LOG_VERBOSE, "name truncated: %s", buf);
	report_load(buf, (uintptr_t)address, length, &lo, &nr_stubs);
	leave(t0);
}

static const jvmtiEvent events[] = {
	JVMTI_EVENT_COMPILED_METHOD_LOAD,
	JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
	JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
};

#define NR_EVENTS	(sizeof(events) / sizeof(events[0]))

static void usage(void)
{
	fputs("perfinject-jvmti: -agentpath:libperfinject-jvmti.so[=OPT,...]\n"
	      "  backends=LIST  kernel, perfmap, jitdump, all or none, "
	      "joined by '+'\n"
	      "                 (default: $PERFINJECT_BACKENDS, else kernel "
	      "if the kernel\n"
	      "                 has PR_PERF_JIT_CODE, else none)\n"
	      "  dir=PATH       directory of perf-PID.map and jit-PID.dump "
	      "(/tmp)\n"
	      "  strict         fail if a requested backend cannot be used\n"
	      "  verbose        log every load and unload to stderr "
	      "(implies stats)\n"
	      "  stats          print counts and the agent's CPU time at "
	      "exit\n"
	      "  quiet          print nothing but errors\n"
	      "  rundown        if already active: report all live code "
	      "again\n"
	      "  nolines        no line tables (source lines, inlined "
	      "frames)\n"
	      "  help           print this and do nothing\n", stderr);
}

static int parse_backends(const char *s, size_t n, struct agent_opts *o)
{
	static const struct {
		const char *name;
		unsigned int bits;
	} names[] = {
		{ "kernel",	PERFINJECT_BACKEND_KERNEL },
		{ "perfmap",	PERFINJECT_BACKEND_PERFMAP },
		{ "jitdump",	PERFINJECT_BACKEND_JITDUMP },
		{ "all",	PERFINJECT_BACKEND_ALL },
		{ "none",	0 },
	};
	size_t len, i;

	o->backends = 0;
	o->backends_none = false;
	while (n) {
		len = strcspn(s, "+");
		if (len > n)
			len = n;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == len &&
			    !strncmp(s, names[i].name, len))
				break;
		if (i == sizeof(names) / sizeof(names[0])) {
			fprintf(stderr, PREFIX "unknown backend '%.*s'\n",
				(int)len, s);
			return -1;
		}
		o->backends |= names[i].bits;
		if (!names[i].bits)
			o->backends_none = true;
		s += len;
		n -= len;
		if (n) {
			s++;
			n--;
		}
	}
	if (o->backends)
		o->backends_none = false;
	else if (!o->backends_none) {
		fputs(PREFIX "backends= needs a value\n", stderr);
		return -1;
	}
	return 0;
}

static int parse_opts(const char *s, struct agent_opts *o)
{
	const char *val;
	size_t len, klen;

	memset(o, 0, sizeof(*o));
	o->log = LOG_DEFAULT;
	while (s && *s) {
		len = strcspn(s, ",");
		val = memchr(s, '=', len);
		klen = val ? (size_t)(val - s) : len;
#define IS(k) (klen == sizeof(k) - 1 && !strncmp(s, k, klen))
		if (IS("backends") && val) {
			if (parse_backends(val + 1, len - klen - 1, o))
				return -1;
		} else if (IS("dir") && val && len > klen + 1) {
			free(o->dir);
			o->dir = strndup(val + 1, len - klen - 1);
			if (!o->dir)
				return -1;
		} else if (IS("strict") && !val) {
			o->strict = true;
		} else if (IS("verbose") && !val) {
			o->log = LOG_VERBOSE;
			o->stats = true;
		} else if (IS("stats") && !val) {
			o->stats = true;
		} else if (IS("quiet") && !val) {
			o->log = LOG_QUIET;
		} else if (IS("rundown") && !val) {
			o->rundown = true;
		} else if (IS("help") && !val) {
			o->help = true;
		} else if (IS("nolines") && !val) {
			o->nolines = true;
		} else if (len) {
			fprintf(stderr, PREFIX "unknown option '%.*s' (try "
				"'help')\n", (int)len, s);
			return -1;
		}
#undef IS
		s += len;
		if (*s)
			s++;
	}
	return 0;
}

static const char *backend_names(unsigned int b, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s%s",
		 b & PERFINJECT_BACKEND_KERNEL ? "kernel " : "",
		 b & PERFINJECT_BACKEND_PERFMAP ? "perfmap " : "",
		 b & PERFINJECT_BACKEND_JITDUMP ? "jitdump " : "",
		 b ? "" : "none ");
	buf[strlen(buf) - 1] = 0;
	return buf;
}

/* Errors are not reported when turning off (the VM may be dead). */
static int set_events(jvmtiEnv *jvmti, jvmtiEventMode mode)
{
	jvmtiError e;
	size_t i;

	for (i = 0; i < NR_EVENTS; i++) {
		e = (*jvmti)->SetEventNotificationMode(jvmti, mode, events[i],
						       NULL);
		if (e != JVMTI_ERROR_NONE && mode == JVMTI_ENABLE) {
			fprintf(stderr, PREFIX "SetEventNotificationMode(%d): "
				"JVMTI error %d\n", events[i], e);
			return -1;
		}
	}
	return 0;
}

/* The library's messages, under the agent's name and its "quiet". */
static int lib_print(enum perfinject_print_level level, const char *fmt,
		     va_list ap)
{
	char buf[1024];

	if (level != PERFINJECT_WARN || log_level == LOG_QUIET)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, PREFIX "%s", buf);
	return 0;
}

/* Is @flag among the JVM's options: its command line or the variables? */
static bool jvm_flag(const char *flag)
{
	static const char *const vars[] = {
		"JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS",
	};
	char buf[65536];
	ssize_t n = 0, i;
	const char *v;
	size_t k;
	int fd;

	for (k = 0; k < sizeof(vars) / sizeof(vars[0]); k++)
		if ((v = getenv(vars[k])) && strstr(v, flag))
			return true;
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return false;
	for (i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = 0;
	return strstr(buf, flag);
}

static struct perfinject *open_handle(const struct agent_opts *o)
{
	PERFINJECT_OPTS(popts, .backends = o->backends, .dir = o->dir);
	struct perfinject *h;

	if (o->strict)
		popts.flags |= PERFINJECT_F_STRICT;
	if (o->backends_none)
		popts.flags |= PERFINJECT_F_REGISTRY_ONLY;
	/* A profiler that attaches later gets the lines too. */
	if (!o->nolines)
		popts.flags |= PERFINJECT_F_REGISTRY_DATA;
	h = perfinject__new(&popts);
	if (!h) {
		fprintf(stderr, PREFIX "perfinject__new: %s\n",
			strerror(errno));
		return NULL;
	}
	return h;
}

/*
 * Turn the events off and make callbacks return at once, then wait up to
 * 2 s for those in progress. True if none is left.
 */
static bool quiesce(void)
{
	struct timespec ts = { 0, 1000000 };
	int i;

	atomic_store(&closing, true);
	if (agent_jvmti)
		set_events(agent_jvmti, JVMTI_DISABLE);
	for (i = 0; atomic_load(&inflight) && i < 2000; i++)
		nanosleep(&ts, NULL);
	return !atomic_load(&inflight);
}

/* Agent_OnAttach of an active agent: only "rundown" does anything. */
static jint again(const struct agent_opts *o)
{
	uint64_t t0 = 0;
	int n;

	if (!o->rundown) {
		if (o->log > LOG_QUIET)
			fputs(PREFIX "already active in this JVM; options "
			      "ignored\n", stderr);
		return JNI_OK;
	}
	if (!pi || !enter(&t0)) {
		fputs(PREFIX "rundown: the agent is not running\n", stderr);
		return JNI_ERR;
	}
	n = perfinject__rundown(pi);
	leave(t0);
	if (n < 0) {
		fprintf(stderr, PREFIX "rundown: %s\n", strerror(-n));
		return JNI_ERR;
	}
	if (o->log > LOG_QUIET)
		fprintf(stderr, PREFIX "rundown: %d entries reported again\n",
			n);
	return JNI_OK;
}

/*
 * Start the agent in the VM behind @vm. Returns JNI_OK also when the
 * agent was already active, JNI_ERR on bad options or when it cannot
 * start.
 */
static jint start(JavaVM *vm, const char *options, bool live)
{
	jvmtiEventCallbacks cb = {
		.CompiledMethodLoad	= cb_compiled_method_load,
		.CompiledMethodUnload	= cb_compiled_method_unload,
		.DynamicCodeGenerated	= cb_dynamic_code_generated,
	};
	jvmtiCapabilities caps = {
		.can_generate_compiled_method_load_events = 1,
	}, lcaps = {
		.can_get_line_numbers = 1,
		.can_get_source_file_name = 1,
	};
	struct agent_opts o;
	jvmtiEnv *jvmti;
	jvmtiError e;
	unsigned int b;
	char bn[32];

	if (parse_opts(options, &o)) {
		free(o.dir);
		return JNI_ERR;
	}
	if (o.help) {
		usage();
		free(o.dir);
		return JNI_OK;
	}
	if (atomic_exchange(&started, true)) {
		free(o.dir);
		return again(&o);
	}
	log_level = o.log;
	stats = o.stats;
	perfinject_set_print(lib_print);

	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
		fputs(PREFIX "no JVMTI 1.2 environment\n", stderr);
		goto out_unstart;
	}
	e = (*jvmti)->AddCapabilities(jvmti, &caps);
	if (e != JVMTI_ERROR_NONE) {
		fprintf(stderr, PREFIX "AddCapabilities: JVMTI error %d\n", e);
		goto out_dispose;
	}
	/* Lines are a bonus: without the capabilities, names only. */
	lines_on = !o.nolines &&
		   (*jvmti)->AddCapabilities(jvmti, &lcaps) == JVMTI_ERROR_NONE;
	if (!o.nolines && !lines_on)
		say(LOG_DEFAULT, "no line numbers: the JVM does not give them");
	e = (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb));
	if (e != JVMTI_ERROR_NONE) {
		fprintf(stderr, PREFIX "SetEventCallbacks: JVMTI error %d\n",
			e);
		goto out_dispose;
	}
	pi = open_handle(&o);
	if (!pi)
		goto out_dispose;
	agent_jvmti = jvmti;
	if (set_events(jvmti, JVMTI_ENABLE))
		goto out_free;

	/* Say so by default when nothing goes anywhere unasked. */
	b = perfinject__backends(pi);
	say(b || o.backends_none ? LOG_VERBOSE : LOG_DEFAULT,
	    "active in pid %d, backends: %s%s", (int)getpid(),
	    backend_names(b, bn, sizeof(bn)), b || o.backends_none ? "" :
	    o.backends ? " (registry only: the backends asked for could not "
	    "be used, see above)" :
	    " (registry only; say backends=perfmap for perf-PID.map)");
	/* HotSpot's own perf map would replace ours at exit. */
	if ((b & PERFINJECT_BACKEND_PERFMAP) &&
	    (!o.dir || !strcmp(o.dir, "/tmp")) &&
	    (jvm_flag("+DumpPerfMapAtExit")))
		say(LOG_DEFAULT, "-XX:+DumpPerfMapAtExit will replace "
		    "/tmp/perf-%d.map at exit with the JVM's own (no stubs, "
		    "no unloaded code); drop the flag, or use the jitdump "
		    "backend", (int)getpid());

	if (live) {
		/*
		 * Replay what was generated before the events were on; what
		 * was reported meanwhile comes again and is a duplicate.
		 */
		e = (*jvmti)->GenerateEvents(jvmti,
					     JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
		if (e != JVMTI_ERROR_NONE)
			fprintf(stderr, PREFIX "GenerateEvents(stubs): JVMTI "
				"error %d\n", e);
		e = (*jvmti)->GenerateEvents(jvmti,
					     JVMTI_EVENT_COMPILED_METHOD_LOAD);
		if (e != JVMTI_ERROR_NONE)
			fprintf(stderr, PREFIX "GenerateEvents(methods): JVMTI "
				"error %d\n", e);
		say(LOG_VERBOSE, "attached: %zu entries live",
		    perfinject__count(pi));
	}
	free(o.dir);
	return JNI_OK;

out_free:
	if (quiesce()) {
		perfinject__free(pi);
		pi = NULL;
		atomic_store(&closing, false);
	}
	agent_jvmti = NULL;
out_dispose:
	(*jvmti)->DisposeEnvironment(jvmti);
out_unstart:
	/* A handle still in use stays, and so does "started". */
	if (!pi)
		atomic_store(&started, false);
	free(o.dir);
	return JNI_ERR;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	return start(vm, options, false);
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options,
				      void *reserved)
{
	(void)reserved;
	return start(vm, options, true);
}

/*
 * The VM is going away. Stop the callbacks, wait (a bounded time) for
 * those running, then release the handle: that unloads everything still
 * live and closes the files. If a callback does not finish in time the
 * handle is left for the process exit.
 */
JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	bool idle;
	int i;

	(void)vm;
	if (!pi || atomic_load(&closing))
		return;
	idle = quiesce();
	if (stats)
		fprintf(stderr, PREFIX "exit: %" PRIuFAST64 " methods, %"
			PRIuFAST64 " stubs, %" PRIuFAST64 " unloads, %"
			PRIuFAST64 " duplicates, %" PRIuFAST64 " replaced, %zu "
			"live; %" PRIuFAST64 " callbacks, %.3f ms CPU\n",
			atomic_load(&nr_methods), atomic_load(&nr_stubs),
			atomic_load(&nr_unloads), atomic_load(&nr_dups),
			atomic_load(&nr_replaced), perfinject__count(pi),
			atomic_load(&nr_calls), atomic_load(&cpu_ns) / 1e6);
	for (i = 0; i < NR_ERR; i++)
		if (atomic_load(&nr_errors[i]))
			fprintf(stderr, PREFIX "%s: %" PRIuFAST64 " times\n",
				err_what[i], atomic_load(&nr_errors[i]));
	if (!idle)
		return;
	perfinject__free(pi);
	pi = NULL;
}
