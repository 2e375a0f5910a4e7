// SPDX-License-Identifier: GPL-2.0
/*
 * gen-perf-data: write a perf.data file of a synthetic JIT workload, the
 * way 'perf record' writes it, for benchmarking how perf resolves samples
 * in JIT code.
 *
 * A fake process (COMM, an MMAP2 of its executable and one of an anonymous
 * code heap) loads N functions one after the other and is sampled S times
 * in between (PERF_RECORD_SAMPLE with IP|TID|TIME|PERIOD, sample_id_all,
 * use_clockid on CLOCK_MONOTONIC). Each sample hits a function that is
 * loaded at its time. Where the names of the functions come from depends
 * on --mode:
 *
 *   jit      PERF_RECORD_JIT_CODE records (LOAD, and UNLOAD with --reuse)
 *            in the perf.data file itself
 *   perfmap  a perf map file, /tmp/perf-PID.map, written as a runtime does
 *   jitdump  a jitdump file, DIR/jit-PID.dump, with the code bytes, and an
 *            MMAP2 of it in perf.data, for 'perf inject --jit'
 *
 * With --reuse PCT, PCT% of the loads reuse the place of a function loaded
 * before, which is unloaded first: same address, same length, another
 * name. A perf map has no time and cannot tell them apart.
 *
 * --truth FILE gets one line per sample, in time order: the sample's IP in
 * hex and the name of the function that was loaded there at its time.
 *
 * Other options give it the shape of a real runtime and session: several
 * threads, several CPUs (records in time order per CPU only, as perf
 * record writes them), a second event of another sample_type, call
 * chains, an MMAP2 of the code heap every N loads (W^X), gaps between
 * functions, and reuse with other lengths.
 *
 * Everything but the header's cmdline and os release depends only on the
 * options: the pseudo-random numbers are from a seeded splitmix64.
 *
 * Build with the patched UAPI header, e.g. the one tools/perf uses:
 *   cc -O2 -Wall -Wextra -Werror -I<linux-tools>/tools/include/uapi \
 *      -o gen-perf-data gen-perf-data.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
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

/* perf.data, see tools/perf/Documentation/perf.data-file-format.txt */
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

struct perf_file_section {
	u64 offset;
	u64 size;
};

struct perf_file_header {
	u64 magic;
	u64 size;
	u64 attr_size;
	struct perf_file_section attrs;
	struct perf_file_section data;
	struct perf_file_section event_types;
	u64 adds_features[HEADER_FEAT_BITS / 64];
};

struct perf_file_attr {
	struct perf_event_attr attr;
	struct perf_file_section ids;
};

/* sample_id of sample_type IP|TID|TIME|PERIOD */
struct sample_id {
	u32 pid, tid;
	u64 time;
};

/* jitdump, see tools/perf/util/jitdump.h */
#define JITHEADER_MAGIC		0x4A695444
#define JITHEADER_VERSION	1
#define JIT_CODE_LOAD		0
#define JIT_CODE_CLOSE		3

struct jitheader {
	u32 magic;
	u32 version;
	u32 total_size;
	u32 elf_mach;
	u32 pad1;
	u32 pid;
	u64 timestamp;
	u64 flags;
};

struct jr_prefix {
	u32 id;
	u32 total_size;
	u64 timestamp;
};

struct jr_code_load {
	struct jr_prefix p;
	u32 pid;
	u32 tid;
	u64 vma;
	u64 code_addr;
	u64 code_size;
	u64 code_index;
};

#if defined(__x86_64__)
#define JIT_ELF_MACH	62	/* EM_X86_64 */
#elif defined(__aarch64__)
#define JIT_ELF_MACH	183	/* EM_AARCH64 */
#else
#define JIT_ELF_MACH	0
#endif

#define ALIGN8(x)	(((x) + 7) & ~(u64)7)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define HEAP_START	0x7f3a40000000ULL	/* the anonymous code heap */
#define EXE_START	0x555555554000ULL
#define FN_ALIGN	16
#define FN_MAX_LEN	1024
#define SAMPLE_PERIOD	250000			/* cpu-clock, 4 kHz */
#define T0		5000000000000ULL	/* CLOCK_MONOTONIC, ns */

enum mode { MODE_JIT, MODE_PERFMAP, MODE_JITDUMP };

struct out {
	FILE		*f;
	const char	*path;
	u64		off;
};

static struct {
	enum mode	mode;
	const char	*output;
	const char	*truth;
	const char	*perf_map;
	const char	*jitdump;
	unsigned long	nr_functions;
	unsigned long	nr_samples;
	unsigned int	reuse_pct;
	u64		seed;
	u32		pid;
	u64		round_bytes;
	unsigned int	nr_threads;
	unsigned int	nr_cpus;
	unsigned int	nr_events;
	unsigned int	callchain;
	unsigned long	mmap_every;
	unsigned int	gap;
	bool		reuse_len;
} opt = {
	.output		= "perf.data",
	.nr_functions	= 200000,
	.nr_samples	= 1000000,
	.seed		= 1,
	.pid		= 4242,
	.round_bytes	= 65536,
	.nr_threads	= 1,
	.nr_cpus	= 1,
	.nr_events	= 1,
};

static u64 rng_state;

static u64 rnd(void)
{
	u64 z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static __attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "gen-perf-data: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	exit(1);
}

static void out_open(struct out *o, const char *path)
{
	o->path = path;
	o->off = 0;
	o->f = fopen(path, "w");
	if (!o->f)
		die("%s: %s\n", path, strerror(errno));
	setvbuf(o->f, NULL, _IOFBF, 1 << 20);
}

static void out_write(struct out *o, const void *buf, size_t len)
{
	if (len && fwrite(buf, len, 1, o->f) != 1)
		die("%s: write: %s\n", o->path, strerror(errno));
	o->off += len;
}

static void out_zero(struct out *o, size_t len)
{
	static const char zero[NAME_ALIGN];

	while (len) {
		size_t n = len < sizeof(zero) ? len : sizeof(zero);

		out_write(o, zero, n);
		len -= n;
	}
}

static void out_seek(struct out *o, u64 off)
{
	if (fseeko(o->f, off, SEEK_SET))
		die("%s: seek: %s\n", o->path, strerror(errno));
	o->off = off;
}

static void out_close(struct out *o)
{
	if (fclose(o->f))
		die("%s: close: %s\n", o->path, strerror(errno));
	o->f = NULL;
}

/* The name of function i: a function of i alone. */
static const char *fn_name(unsigned long i)
{
	static const char * const words[] = {
		"parse", "eval", "loop", "visit", "hash", "compare", "alloc",
		"render", "encode", "decode", "lookup", "dispatch", "resolve",
		"apply", "reduce", "scan",
	};
	static const char * const classes[] = {
		"Interp", "Parser", "Vec", "Map", "String", "Json", "Regex",
		"Http", "Sched",
	};
	static char buf[96];
	u64 h = (i + 1) * 0x9e3779b97f4a7c15ULL;

	snprintf(buf, sizeof(buf), "jit::%s::%s_%lu",
		 classes[(h >> 40) % ARRAY_SIZE(classes)],
		 words[(h >> 20) % ARRAY_SIZE(words)], i);
	return buf;
}

/* --- perf.data records ------------------------------------------------ */

static struct out data;

/*
 * The events: the first one also takes the tracking records (COMM, MMAP2,
 * JIT_CODE), as perf record's first event or its dummy does; with
 * --events 2 a second one, of another sample_type (with CPU and ADDR, as a
 * tracepoint next to cycles has), takes every other sample. Each has one
 * id, which PERF_SAMPLE_IDENTIFIER carries when there are two.
 */
struct event {
	struct perf_event_attr	attr;
	u64			id;
	const char		*name;
};

static struct event events[2];

/*
 * perf record reads the ring buffers of all CPUs in a pass and writes
 * what each holds, one after the other, then a FINISHED_ROUND: records are
 * in time order per CPU, not across them. Records are kept per CPU until
 * a round's worth is there.
 */
struct cpu_buf {
	char	*buf;
	size_t	len;
	size_t	alloc;
};

static struct cpu_buf *cpu_bufs;
static size_t buffered;

/* Who writes the record at hand: its thread and its CPU. */
static u32 cur_tid;
static unsigned int cur_cpu;

static void rec_put(const void *rec, size_t len)
{
	struct cpu_buf *cb = &cpu_bufs[cur_cpu];

	if (cb->len + len > cb->alloc) {
		size_t alloc = cb->alloc ? 2 * cb->alloc : 1 << 20;

		while (alloc < cb->len + len)
			alloc *= 2;
		cb->buf = realloc(cb->buf, alloc);
		if (!cb->buf)
			die("out of memory\n");
		cb->alloc = alloc;
	}
	memcpy(cb->buf + cb->len, rec, len);
	cb->len += len;
	buffered += len;
}

static void flush_round(void)
{
	struct perf_event_header h = {
		.type	= PERF_RECORD_FINISHED_ROUND,
		.size	= sizeof(h),
	};

	for (unsigned int cpu = 0; cpu < opt.nr_cpus; cpu++) {
		out_write(&data, cpu_bufs[cpu].buf, cpu_bufs[cpu].len);
		cpu_bufs[cpu].len = 0;
	}
	out_write(&data, &h, sizeof(h));
	buffered = 0;
}

/* Like perf record after a pass over the ring buffers. */
static void maybe_finished_round(void)
{
	if (buffered >= opt.round_bytes)
		flush_round();
}

/* A record under construction: its header, body, then sample_id. */
static union {
	struct perf_event_header	h;
	char				b[8192];
} rb;
static size_t rb_len;

static void rb_start(u32 type, u16 misc)
{
	rb.h.type = type;
	rb.h.misc = misc;
	rb_len = sizeof(rb.h);
}

static void rb_add(const void *p, size_t len)
{
	if (rb_len + len > sizeof(rb))
		die("record too large\n");
	memcpy(rb.b + rb_len, p, len);
	rb_len += len;
}

static void rb_u32(u32 v)
{
	rb_add(&v, sizeof(v));
}

static void rb_u64(u64 v)
{
	rb_add(&v, sizeof(v));
}

static void rb_end(void)
{
	rb.h.size = rb_len;
	rec_put(&rb, rb_len);
}

/* The sample_id of @ev, in the order perf_event.h gives. */
static void rb_sample_id(const struct event *ev, u64 time)
{
	u64 type = ev->attr.sample_type;

	if (type & PERF_SAMPLE_TID) {
		rb_u32(opt.pid);
		rb_u32(cur_tid);
	}
	if (type & PERF_SAMPLE_TIME)
		rb_u64(time);
	if (type & PERF_SAMPLE_CPU) {
		rb_u32(cur_cpu);
		rb_u32(0);
	}
	if (type & PERF_SAMPLE_IDENTIFIER)
		rb_u64(ev->id);
}

static void emit_comm(const char *comm, bool exec, u64 time)
{
	char name[16] = "";

	snprintf(name, sizeof(name), "%s", comm);
	rb_start(PERF_RECORD_COMM, PERF_RECORD_MISC_USER |
		 (exec ? PERF_RECORD_MISC_COMM_EXEC : 0));
	rb_u32(opt.pid);
	rb_u32(cur_tid);
	rb_add(name, sizeof(name));
	rb_sample_id(&events[0], time);
	rb_end();
}

static void emit_mmap2(u64 addr, u64 len, u32 prot, u32 flags,
		       const char *filename, u64 time)
{
	size_t fn_size = ALIGN8(strlen(filename) + 1);
	char name[PATH_MAX + 8] = "";

	if (fn_size > sizeof(name))
		die("%s: name too long\n", filename);
	snprintf(name, sizeof(name), "%s", filename);
	rb_start(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	rb_u32(opt.pid);
	rb_u32(cur_tid);
	rb_u64(addr);
	rb_u64(len);
	rb_u64(0);		/* pgoff */
	rb_u32(0);		/* maj */
	rb_u32(0);		/* min */
	rb_u64(0);		/* ino */
	rb_u64(0);		/* ino_generation */
	rb_u32(prot);
	rb_u32(flags);
	rb_add(name, fn_size);
	rb_sample_id(&events[0], time);
	rb_end();
}

static void emit_jit_code(u32 op, u64 addr, u64 len, u64 index,
			  const char *fn, u64 time)
{
	size_t name_size = fn ? ALIGN8(strlen(fn) + 1) : 0;
	char name[128] = "";

	if (name_size > sizeof(name))
		die("name too long\n");
	if (fn)
		snprintf(name, sizeof(name), "%s", fn);
	rb_start(PERF_RECORD_JIT_CODE, PERF_RECORD_MISC_USER);
	rb_u32(opt.pid);
	rb_u32(cur_tid);
	rb_u32(op);
	rb_u32(0);		/* flags */
	rb_u64(addr);
	rb_u64(len);
	rb_u64(0);		/* new_addr */
	rb_u64(index);
	rb_add(name, name_size);
	rb_sample_id(&events[0], time);
	rb_end();
}

/* A sample of @ev at @ip, with @nr_callers return addresses in @callers. */
static void emit_sample(const struct event *ev, u64 ip, u64 time,
			const u64 *callers, unsigned int nr_callers)
{
	u64 type = ev->attr.sample_type;

	rb_start(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	if (type & PERF_SAMPLE_IDENTIFIER)
		rb_u64(ev->id);
	rb_u64(ip);
	rb_u32(opt.pid);
	rb_u32(cur_tid);
	rb_u64(time);
	if (type & PERF_SAMPLE_ADDR)
		rb_u64(0);
	if (type & PERF_SAMPLE_CPU) {
		rb_u32(cur_cpu);
		rb_u32(0);
	}
	rb_u64(SAMPLE_PERIOD);
	if (type & PERF_SAMPLE_CALLCHAIN) {
		rb_u64(2 + nr_callers);
		rb_u64(PERF_CONTEXT_USER);
		rb_u64(ip);
		for (unsigned int i = 0; i < nr_callers; i++)
			rb_u64(callers[i]);
	}
	rb_end();
}

/* --- header features -------------------------------------------------- */

static void write_string(struct out *o, const char *s)
{
	u32 len = strlen(s) + 1;
	u32 olen = (len + NAME_ALIGN - 1) & ~(NAME_ALIGN - 1);

	out_write(o, &olen, sizeof(olen));
	out_write(o, s, len);
	out_zero(o, olen - len);
}

static void write_u32(struct out *o, u32 v)
{
	out_write(o, &v, sizeof(v));
}

static void write_u64(struct out *o, u64 v)
{
	out_write(o, &v, sizeof(v));
}

static void write_feature(struct out *o, int feat, int argc, char **argv,
			  u64 first_sample, u64 last_sample)
{
	struct utsname uts;
	int i;

	if (uname(&uts))
		die("uname: %s\n", strerror(errno));

	switch (feat) {
	case HEADER_HOSTNAME:
		write_string(o, "gen-perf-data");
		break;
	case HEADER_OSRELEASE:
		write_string(o, uts.release);
		break;
	case HEADER_VERSION:
		write_string(o, "gen-perf-data 1");
		break;
	case HEADER_ARCH:
		write_string(o, uts.machine);
		break;
	case HEADER_NRCPUS:
		write_u32(o, opt.nr_cpus);	/* available */
		write_u32(o, opt.nr_cpus);	/* online */
		break;
	case HEADER_CMDLINE:
		write_u32(o, argc);
		for (i = 0; i < argc; i++)
			write_string(o, argv[i]);
		break;
	case HEADER_EVENT_DESC:
		write_u32(o, opt.nr_events);
		write_u32(o, sizeof(struct perf_event_attr));
		for (i = 0; i < (int)opt.nr_events; i++) {
			out_write(o, &events[i].attr, sizeof(events[i].attr));
			write_u32(o, 1);
			write_string(o, events[i].name);
			write_u64(o, events[i].id);
		}
		break;
	case HEADER_SAMPLE_TIME:
		write_u64(o, first_sample);
		write_u64(o, last_sample);
		break;
	case HEADER_CLOCKID:
		write_u64(o, 1);	/* resolution, ns */
		break;
	}
}

static void write_header(int argc, char **argv, u64 first_sample,
			 u64 last_sample, u64 attrs_offset, u64 data_offset)
{
	static const int feats[] = {
		HEADER_HOSTNAME, HEADER_OSRELEASE, HEADER_VERSION, HEADER_ARCH,
		HEADER_NRCPUS, HEADER_CMDLINE, HEADER_EVENT_DESC,
		HEADER_SAMPLE_TIME, HEADER_CLOCKID,
	};
	enum { NR_FEATS = ARRAY_SIZE(feats) };
	struct perf_file_section sec[NR_FEATS];
	struct perf_file_header fh = {
		.magic		= PERF_MAGIC,
		.size		= sizeof(fh),
		.attr_size	= sizeof(struct perf_file_attr),
		.attrs		= {
			.offset	= attrs_offset,
			.size	= opt.nr_events * sizeof(struct perf_file_attr),
		},
		.data		= {
			.offset	= data_offset,
			.size	= data.off - data_offset,
		},
	};
	u64 feat_offset = data.off;
	int i;

	/* The features follow the data: a table of sections, then each. */
	out_zero(&data, sizeof(sec));
	for (i = 0; i < NR_FEATS; i++) {
		sec[i].offset = data.off;
		write_feature(&data, feats[i], argc, argv, first_sample,
			      last_sample);
		sec[i].size = data.off - sec[i].offset;
		fh.adds_features[feats[i] / 64] |= 1ULL << (feats[i] % 64);
	}
	out_seek(&data, feat_offset);
	out_write(&data, sec, sizeof(sec));
	out_seek(&data, 0);
	out_write(&data, &fh, sizeof(fh));
}

/* --- the workload ----------------------------------------------------- */

struct slot {
	u64		addr;
	u64		len;
	unsigned long	fn;	/* the function loaded there now */
};

static struct out perf_map, jitdump, truth;

static void jitdump_open(u64 time)
{
	struct jitheader h = {
		.magic		= JITHEADER_MAGIC,
		.version	= JITHEADER_VERSION,
		.total_size	= sizeof(h),
		.elf_mach	= JIT_ELF_MACH,
		.pid		= opt.pid,
		.timestamp	= time,
	};

	out_open(&jitdump, opt.jitdump);
	out_write(&jitdump, &h, sizeof(h));
}

static void jitdump_load(const struct slot *s, u64 time)
{
	static unsigned char code[FN_MAX_LEN];
	const char *name = fn_name(s->fn);
	struct jr_code_load r = {
		.p.id		= JIT_CODE_LOAD,
		.p.timestamp	= time,
		.pid		= opt.pid,
		.tid		= opt.pid,
		.vma		= s->addr,
		.code_addr	= s->addr,
		.code_size	= s->len,
		.code_index	= s->fn,
	};

	if (!code[0])
		memset(code, 0x90, sizeof(code));	/* nop */
	r.p.total_size = sizeof(r) + strlen(name) + 1 + s->len;
	out_write(&jitdump, &r, sizeof(r));
	out_write(&jitdump, name, strlen(name) + 1);
	code[s->len - 1] = 0xc3;			/* ret */
	out_write(&jitdump, code, s->len);
	code[s->len - 1] = 0x90;
}

static void jitdump_close(u64 time)
{
	struct jr_prefix r = {
		.id		= JIT_CODE_CLOSE,
		.total_size	= sizeof(r),
		.timestamp	= time,
	};

	out_write(&jitdump, &r, sizeof(r));
	out_close(&jitdump);
}

static void load(const struct slot *s, u64 time)
{
	char line[160];

	switch (opt.mode) {
	case MODE_JIT:
		emit_jit_code(PERF_JIT_CODE_LOAD, s->addr, s->len, s->fn,
			      fn_name(s->fn), time);
		break;
	case MODE_PERFMAP:
		snprintf(line, sizeof(line), "%llx %llx %s\n",
			 (unsigned long long)s->addr,
			 (unsigned long long)s->len, fn_name(s->fn));
		out_write(&perf_map, line, strlen(line));
		break;
	case MODE_JITDUMP:
		jitdump_load(s, time);
		break;
	}
}

static void unload(const struct slot *s, u64 time)
{
	/* Neither a perf map nor a jitdump can say it. */
	if (opt.mode == MODE_JIT)
		emit_jit_code(PERF_JIT_CODE_UNLOAD, s->addr, s->len, s->fn,
			      NULL, time);
}

/* The place whose code calls the code in place @k (> 0): an older one. */
static unsigned long parent(unsigned long k)
{
	u64 h = (k + 1) * 0xbf58476d1ce4e5b9ULL;

	/* Mostly near the root, so that the tree is a few levels deep. */
	return (h >> 33) % (k < 64 ? k : 64 + (h >> 20) % (k - 64 + 1) / 64);
}

/* The event, thread and CPU of the next record: random where there are several. */
static const struct event *pick(void)
{
	cur_tid = opt.nr_threads > 1 ? opt.pid + rnd() % opt.nr_threads : opt.pid;
	cur_cpu = opt.nr_cpus > 1 ? rnd() % opt.nr_cpus : 0;
	return opt.nr_events > 1 ? &events[rnd() % 2] : &events[0];
}

static void setup_events(void)
{
	struct perf_event_attr *attr = &events[0].attr;
	u64 type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		   PERF_SAMPLE_PERIOD;

	if (opt.nr_cpus > 1)
		type |= PERF_SAMPLE_CPU;	/* as perf record -a */
	if (opt.callchain)
		type |= PERF_SAMPLE_CALLCHAIN;
	if (opt.nr_events > 1)
		type |= PERF_SAMPLE_IDENTIFIER;

	attr->type		= PERF_TYPE_SOFTWARE;
	attr->size		= sizeof(*attr);
	attr->config		= PERF_COUNT_SW_CPU_CLOCK;
	attr->sample_period	= SAMPLE_PERIOD;
	attr->sample_type	= type;
	attr->disabled		= 1;
	attr->exclude_kernel	= 1;
	attr->exclude_hv	= 1;
	attr->mmap		= 1;
	attr->comm		= 1;
	attr->task		= 1;
	attr->sample_id_all	= 1;
	attr->mmap2		= 1;
	attr->comm_exec		= 1;
	attr->use_clockid	= 1;
	attr->clockid		= CLOCK_MONOTONIC;
	attr->jit_code		= 1;	/* as patched perf record asks */
	events[0].id = 1000;
	events[0].name = "cpu-clock:u";

	/* Samples only, and a sample_id of another size. */
	events[1].attr = *attr;
	events[1].attr.config = PERF_COUNT_SW_TASK_CLOCK;
	events[1].attr.sample_type |= PERF_SAMPLE_CPU | PERF_SAMPLE_ADDR;
	events[1].attr.mmap = events[1].attr.comm = events[1].attr.task = 0;
	events[1].attr.mmap2 = events[1].attr.comm_exec = 0;
	events[1].attr.jit_code = 0;
	events[1].id = 1001;
	events[1].name = "task-clock:u";
}

static void generate(int argc, char **argv)
{
	unsigned long nr_slots = 0, i, k, k2, nr, done = 0, reused = 0;
	u64 fn_span = FN_MAX_LEN + (opt.gap + FN_ALIGN - 1) / FN_ALIGN * FN_ALIGN;
	u64 heap_len = ALIGN8(opt.nr_functions * fn_span);
	u64 t = T0, first_sample = 0, last_sample = 0;
	u64 heap_top = HEAP_START, attrs_offset, data_offset;
	u64 callers[64];
	struct slot *slots;
	char line[160];

	heap_len = (heap_len + (2 << 20) - 1) & ~(u64)((2 << 20) - 1);
	slots = calloc(opt.nr_functions, sizeof(*slots));
	cpu_bufs = calloc(opt.nr_cpus, sizeof(*cpu_bufs));
	if (!slots || !cpu_bufs)
		die("out of memory\n");

	out_open(&data, opt.output);
	if (opt.truth)
		out_open(&truth, opt.truth);
	if (opt.mode == MODE_PERFMAP)
		out_open(&perf_map, opt.perf_map);

	/* header, ids and attrs, the header rewritten at the end */
	setup_events();
	out_zero(&data, sizeof(struct perf_file_header));
	for (i = 0; i < opt.nr_events && opt.nr_events > 1; i++)
		out_write(&data, &events[i].id, sizeof(events[i].id));
	attrs_offset = data.off;
	for (i = 0; i < opt.nr_events; i++) {
		struct perf_file_attr fa = {
			.attr	= events[i].attr,
			.ids	= {
				.offset	= sizeof(struct perf_file_header) + i * sizeof(u64),
				.size	= sizeof(u64),
			},
		};

		/* One event: no ids, as perf record writes it. */
		if (opt.nr_events == 1)
			fa.ids.offset = fa.ids.size = 0;
		out_write(&data, &fa, sizeof(fa));
	}
	data_offset = data.off;

	cur_tid = opt.pid;
	emit_comm("jitvm", true, t++);
	for (i = 1; i < opt.nr_threads; i++) {
		cur_tid = opt.pid + i;
		emit_comm("jitvm-worker", false, t++);
	}
	cur_tid = opt.pid;
	emit_mmap2(EXE_START, 0x100000, PROT_READ | PROT_EXEC, MAP_PRIVATE,
		   "/opt/gen-perf-data/bin/jitvm", t++);
	emit_mmap2(HEAP_START, heap_len, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, "//anon", t++);
	if (opt.mode == MODE_JITDUMP) {
		/* The runtime maps its dump for perf inject to find it. */
		jitdump_open(t);
		emit_mmap2(0x7f3a3fff0000ULL, 4096, PROT_READ | PROT_EXEC,
			   MAP_PRIVATE, opt.jitdump, t++);
	}

	for (i = 0; i < opt.nr_functions; i++) {
		struct slot *s;

		pick();
		t += 1 + rnd() % 1000;
		if (nr_slots && rnd() % 100 < opt.reuse_pct) {
			s = &slots[rnd() % nr_slots];
			unload(s, t++);
			reused++;
			/* Another length: the same or shorter, in the same place. */
			if (opt.reuse_len)
				s->len = FN_ALIGN * (1 + rnd() % (s->len / FN_ALIGN));
		} else {
			s = &slots[nr_slots++];
			s->addr = heap_top;
			s->len = FN_ALIGN * (1 + rnd() % (FN_MAX_LEN / FN_ALIGN));
			heap_top += s->len;
			if (opt.gap)
				heap_top += FN_ALIGN * (rnd() % (opt.gap / FN_ALIGN + 1));
		}
		s->fn = i;
		load(s, t);
		/* W^X: the runtime makes the heap executable again. */
		if (opt.mmap_every && (i + 1) % opt.mmap_every == 0)
			emit_mmap2(HEAP_START, heap_len, PROT_READ | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, "//anon", t++);

		/* samples, spread evenly over the loads */
		nr = (i + 1) * opt.nr_samples / opt.nr_functions - done;
		for (k = 0; k < nr; k++) {
			const struct event *ev = pick();
			const struct slot *hit;
			unsigned int c;
			u64 ip;

			t += SAMPLE_PERIOD / 2 + rnd() % SAMPLE_PERIOD;
			/* a quarter in the newest function, the rest anywhere */
			hit = rnd() % 4 ? &slots[rnd() % nr_slots] : s;
			ip = hit->addr + rnd() % hit->len;
			/*
			 * Callers: a call tree, as real stacks are: the
			 * code in each place is called from the code in one
			 * older place, at one return address, up to main.
			 */
			c = 0;
			for (k2 = hit - slots; k2 && c + 1 < opt.callchain; c++) {
				k2 = parent(k2);
				callers[c] = slots[k2].addr +
					     (k2 * 0x9e3779b97f4a7c15ULL >> 32) % slots[k2].len;
			}
			if (opt.callchain)
				callers[c++] = EXE_START + 0x1234;
			emit_sample(ev, ip, t, callers, c);
			if (!first_sample)
				first_sample = t;
			last_sample = t;
			if (opt.truth) {
				snprintf(line, sizeof(line), "%llx %s\n",
					 (unsigned long long)ip,
					 fn_name(hit->fn));
				out_write(&truth, line, strlen(line));
			}
			maybe_finished_round();
		}
		done += nr;
		maybe_finished_round();
	}
	flush_round();

	write_header(argc, argv, first_sample, last_sample, attrs_offset,
		     data_offset);
	out_close(&data);
	if (opt.truth)
		out_close(&truth);
	if (opt.mode == MODE_PERFMAP)
		out_close(&perf_map);
	if (opt.mode == MODE_JITDUMP)
		jitdump_close(t);

	fprintf(stderr, "gen-perf-data: %s: %lu functions (%lu at a reused address), %lu samples, code heap %#llx-%#llx\n",
		opt.output, opt.nr_functions, reused, done,
		(unsigned long long)HEAP_START, (unsigned long long)heap_top);
	for (i = 0; i < opt.nr_cpus; i++)
		free(cpu_bufs[i].buf);
	free(cpu_bufs);
	free(slots);
}

static void usage(int code)
{
	fprintf(code ? stderr : stdout,
"usage: gen-perf-data [options]\n"
"  -m, --mode MODE      jit (default), perfmap or jitdump\n"
"  -o, --output FILE    perf.data to write (perf.data)\n"
"  -n, --functions N    JIT functions to load (200000)\n"
"  -s, --samples S      samples (1000000)\n"
"  -r, --reuse PCT      percent of loads that reuse an unloaded place (0)\n"
"  -S, --seed SEED      pseudo-random seed (1)\n"
"  -p, --pid PID        pid of the fake process (4242)\n"
"  -t, --truth FILE     write 'ip name' of each sample, in time order\n"
"      --perf-map FILE  perf map to write in perfmap mode (/tmp/perf-PID.map)\n"
"      --jitdump FILE   jitdump to write in jitdump mode, an absolute path\n"
"                       named jit-PID.dump (DIR-of-output/jit-PID.dump)\n"
"      --round-bytes B  FINISHED_ROUND every B bytes of records (65536)\n"
"  The shape of a real runtime and session (defaults: the simplest):\n"
"  -T, --threads N      N threads load code and are sampled (1)\n"
"  -C, --cpus N         records come from N CPUs, in time order per CPU only,\n"
"                       as perf record writes them; adds PERF_SAMPLE_CPU (1)\n"
"  -E, --events N       1, or 2: a second event of another sample_type\n"
"                       (CPU, ADDR) takes half the samples (1)\n"
"  -g, --callchain D    samples carry up to D callers, from a call tree of\n"
"                       the JIT code, then main (0)\n"
"      --mmap-every N   an MMAP2 of the code heap after every N loads, as\n"
"                       an mprotect() under W^X makes it (0: never)\n"
"      --gap MAX        up to MAX bytes between functions (0: packed)\n"
"      --reuse-len      a reused place gets another length, not longer\n");
	exit(code);
}

static unsigned long parse_ul(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || !*s || *end)
		die("bad %s: %s\n", what, s);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "mode",	 required_argument, NULL, 'm' },
		{ "output",	 required_argument, NULL, 'o' },
		{ "functions",	 required_argument, NULL, 'n' },
		{ "samples",	 required_argument, NULL, 's' },
		{ "reuse",	 required_argument, NULL, 'r' },
		{ "seed",	 required_argument, NULL, 'S' },
		{ "pid",	 required_argument, NULL, 'p' },
		{ "truth",	 required_argument, NULL, 't' },
		{ "perf-map",	 required_argument, NULL, 'M' },
		{ "jitdump",	 required_argument, NULL, 'J' },
		{ "round-bytes", required_argument, NULL, 'R' },
		{ "threads",	 required_argument, NULL, 'T' },
		{ "cpus",	 required_argument, NULL, 'C' },
		{ "events",	 required_argument, NULL, 'E' },
		{ "callchain",	 required_argument, NULL, 'g' },
		{ "mmap-every",	 required_argument, NULL, 'W' },
		{ "gap",	 required_argument, NULL, 'G' },
		{ "reuse-len",	 no_argument,	    NULL, 'L' },
		{ "help",	 no_argument,	    NULL, 'h' },
		{ }
	};
	char path[PATH_MAX], *dir;
	int c;

	while ((c = getopt_long(argc, argv, "m:o:n:s:r:S:p:t:T:C:E:g:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "jit"))
				opt.mode = MODE_JIT;
			else if (!strcmp(optarg, "perfmap"))
				opt.mode = MODE_PERFMAP;
			else if (!strcmp(optarg, "jitdump"))
				opt.mode = MODE_JITDUMP;
			else
				die("unknown mode %s\n", optarg);
			break;
		case 'o':
			opt.output = optarg;
			break;
		case 'n':
			opt.nr_functions = parse_ul(optarg, "number of functions");
			break;
		case 's':
			opt.nr_samples = parse_ul(optarg, "number of samples");
			break;
		case 'r':
			opt.reuse_pct = parse_ul(optarg, "reuse percentage");
			break;
		case 'S':
			opt.seed = parse_ul(optarg, "seed");
			break;
		case 'p':
			opt.pid = parse_ul(optarg, "pid");
			break;
		case 't':
			opt.truth = optarg;
			break;
		case 'M':
			opt.perf_map = optarg;
			break;
		case 'J':
			opt.jitdump = optarg;
			break;
		case 'R':
			opt.round_bytes = parse_ul(optarg, "round size");
			break;
		case 'T':
			opt.nr_threads = parse_ul(optarg, "number of threads");
			break;
		case 'C':
			opt.nr_cpus = parse_ul(optarg, "number of CPUs");
			break;
		case 'E':
			opt.nr_events = parse_ul(optarg, "number of events");
			break;
		case 'g':
			opt.callchain = parse_ul(optarg, "call chain depth");
			break;
		case 'W':
			opt.mmap_every = parse_ul(optarg, "loads between mmaps");
			break;
		case 'G':
			opt.gap = parse_ul(optarg, "gap");
			break;
		case 'L':
			opt.reuse_len = true;
			break;
		case 'h':
			usage(0);
			break;
		default:
			usage(2);
		}
	}
	if (optind != argc)
		usage(2);
	if (!opt.nr_functions || !opt.pid || opt.reuse_pct > 100)
		die("need at least one function, a pid and a reuse of at most 100%%\n");
	if (!opt.nr_threads || opt.nr_threads > 1000 || !opt.nr_cpus ||
	    opt.nr_cpus > 1024 || opt.nr_events < 1 || opt.nr_events > 2 ||
	    opt.callchain > 63 || opt.gap > (1 << 20))
		die("threads 1 to 1000, CPUs 1 to 1024, events 1 or 2, callers at most 63, a gap of at most 1 MiB\n");
	rng_state = opt.seed;

	if (opt.mode == MODE_PERFMAP && !opt.perf_map) {
		static char map[64];

		snprintf(map, sizeof(map), "/tmp/perf-%u.map", opt.pid);
		opt.perf_map = map;
	}
	if (opt.mode == MODE_JITDUMP && !opt.jitdump) {
		static char dump[PATH_MAX + 32];

		/* perf inject writes the ELF images next to the dump */
		snprintf(path, sizeof(path), "%s", opt.output);
		dir = strrchr(path, '/');
		if (dir)
			*dir = '\0';
		if (!realpath(dir ? path : ".", dump))
			die("%s: %s\n", path, strerror(errno));
		snprintf(dump + strlen(dump), sizeof(dump) - strlen(dump),
			 "/jit-%u.dump", opt.pid);
		opt.jitdump = dump;
	}
	if (opt.jitdump && opt.jitdump[0] != '/')
		die("--jitdump needs an absolute path: perf inject opens the path in the MMAP2\n");

	generate(argc, argv);
	return 0;
}
