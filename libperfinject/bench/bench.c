// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cost of describing code to perf, as a ratio to a null system call,
 * syscall(SYS_getppid), timed in the same round just before the figure
 * it divides. Timings inside an emulated guest are not real time; the
 * ratios are what to compare. A figure is the median over ROUNDS, a
 * ratio the median of the rounds' ratios.
 *
 *   bench [-n OPS] [-b BATCH] [-r ROUNDS] [-f FORKS] [-P PASSES] [-p]
 *         [-s SECTION[,...]]
 *
 * The sections, in the order they run (-s picks some; default all):
 *
 * fork     fork() and waitpid() of a child that exits at once, median of
 *          FORKS: (a) before any handle exists, which a process can
 *          measure only once, so main() does it before anything else
 *          calls the library (after the benchmark's own buffers exist,
 *          so that only the library differs); (b) while a registry-only
 *          handle holds 1000 entries; (c) after perfinject__free().
 *          Goal: (b) and (c) within 1.5x (a). It runs first so that the
 *          threads and files of the other sections do not weigh on it.
 * ops      For each backend (the registry alone, the kernel, perf-map,
 *          jitdump) and, for the kernel, with and without a perf event
 *          that listens (attr.jit_code, per task, its ring buffer drained
 *          as it fills): OPS loads followed by OPS unloads, one call each
 *          and then in batches of BATCH, per operation.
 * pairs    Per load+unload pair, one call each (OPS loads then OPS
 *          unloads): the registry alone, goal <= 1.0x getppid; perf-map,
 *          goal <= a perf-map line written by hand with fprintf() and
 *          fflush(); jitdump, goal <= a JIT_CODE_LOAD record written by
 *          hand with one writev(). Those formats have no unload, so the
 *          hand-written baselines write one record per pair.
 * batch    The registry alone, per operation: OPS loads then OPS unloads
 *          through perfinject__batch() in batches of 1, 16, 256 and 1024.
 *          Goal: <= 0.25x getppid at 1024.
 * threads  The registry alone, on 1, 2, 4, 8 and 16 threads: (a) one
 *          handle shared by all, each thread doing OPS loads then OPS
 *          unloads of its own addresses, PASSES times over (default
 *          10); (b) the same with a handle per thread; (c) 10 times as
 *          many perfinject__find() per thread on one handle while one
 *          more thread loads and unloads on it. The
 *          cost of an operation (wall time over all threads' operations)
 *          as a multiple of 1 thread's in the same round; goal: at most
 *          2 at 16 threads. With -p, each round's figures as lines
 *          "raw threads SET THREADS NS-PER-OP" too, for
 *          bench/compare-urcu.sh, which prints only ratios of them.
 * kernel   The kernel's own path, without the library: PR_PERF_JIT_CODE
 *          with one LOAD entry per call, and with batches of 64 (per
 *          entry), while no jit_code event exists, while one exists for
 *          another process only, and while one listens to this process;
 *          beside two prctls that only answer (PR_GET_DUMPABLE, and the
 *          probe): the floor of any prctl; a call of no entries, which
 *          the kernel reads, checks and refuses (EINVAL): the cost of
 *          the argument structure; the same calls of UNLOAD entries,
 *          which have no name, to tell what a load's name costs; and
 *          the anchor, the kernel's
 *          own record of a process's own making: PR_SET_NAME, which
 *          writes a PERF_RECORD_COMM, with nothing listening and with a
 *          COMM listener on this process (same event, same ring, comm
 *          instead of jit_code). Skipped without PR_PERF_JIT_CODE, as
 *          are the kernel rows of "ops".
 * memory   Bytes per live function, with 100,000 of them live and names
 *          as long as a JVM's: what the process grows by (resident, and
 *          allocated through malloc) with the registry alone, and with
 *          the perf-map and jitdump backends, each in a child of its own;
 *          the size of each backend's file per function; and the size of
 *          a PERF_RECORD_JIT_CODE LOAD of that name. Not a timing: it
 *          needs no kernel support and reads the same on any machine.
 *
 * perfinject_opts cannot ask for the registry alone: backends 0 is the
 * default, which is the kernel backend where the kernel has
 * PR_PERF_JIT_CODE. So main() sets PERFINJECT_BACKENDS=none, and every
 * handle is checked to have exactly the backends its row is named after.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <perfinject/perfinject.h>
#include "../src/uapi_jit_code.h"
#include "helpers.h"

#define RING_PAGES	256
#define MAX_ROUNDS	64
#define MAX_THREADS	16
#define CODE_LEN	64	/* bytes of every piece of code */
#define FORK_ENTRIES	1000	/* live entries while fork() is timed */
#define MEM_FUNCS	100000	/* live functions the memory is measured with */
#define MEM_NAME	80

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The jitdump load record, as tools/perf/util/jitdump.h has it. */
#define JIT_CODE_LOAD	0

struct jr_code_load {
	uint32_t id;
	uint32_t total_size;
	uint64_t timestamp;
	uint32_t pid;
	uint32_t tid;
	uint64_t vma;
	uint64_t code_addr;
	uint64_t code_size;
	uint64_t code_index;
};

enum section {
	SEC_FORK,
	SEC_OPS,
	SEC_PAIRS,
	SEC_BATCH,
	SEC_THREADS,
	SEC_KERNEL,
	SEC_MEMORY,
	NR_SECTIONS,
};

static const char *const section_names[NR_SECTIONS] = {
	[SEC_FORK]	= "fork",
	[SEC_OPS]	= "ops",
	[SEC_PAIRS]	= "pairs",
	[SEC_BATCH]	= "batch",
	[SEC_THREADS]	= "threads",
	[SEC_KERNEL]	= "kernel",
	[SEC_MEMORY]	= "memory",
};

static int nr_ops = 20000, batch = 256, rounds = 5, nr_forks = 200;
static bool print_raw;	/* -p */
static int thread_passes = 10;	/* -P */
/*
 * Names, and pieces of code per thread: nr_ops, or the fork entries, or
 * the entries of the finds in "threads", whichever is the most.
 */
static int nr_names;
static struct perfinject_code_op *ops;	/* nr_ops loads, then unloads */
static char (*names)[40];
static unsigned char *code;
static const char *dir;

static struct perf_event_mmap_page *ring;
static int ring_fd = -1;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @v. */
static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* The medians of @ns and of @x, as the columns of every table. */
static void print_figure(double *ns, double *x)
{
	printf("  %9.0f  %7.2f", median(ns, rounds), median(x, rounds));
}

static const char *verdict(double x, double bound)
{
	return x <= bound ? "met" : "MISSED";
}

/* A section's title, a blank line before all but the first. */
static __attribute__((format(printf, 1, 2))) void title(const char *fmt, ...)
{
	static int titles;
	va_list ap;

	if (titles++)
		putchar('\n');
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

static uint64_t code_addr(long i)
{
	return (uintptr_t)code + (uint64_t)CODE_LEN * i;
}

/*
 * A handle with exactly @backends, 0 for the registry alone (see the top
 * of the file). NULL with errno set; EOPNOTSUPP when other backends came.
 */
static struct perfinject *bench_new_flags(unsigned int backends,
					  unsigned int flags)
{
	PERFINJECT_OPTS(opts, .backends = backends, .dir = dir,
			.flags = flags | (backends ? PERFINJECT_F_NO_ENV |
					  PERFINJECT_F_STRICT : 0));
	struct perfinject *pi;
	unsigned int got;

	pi = perfinject__new(&opts);
	if (!pi)
		return NULL;
	got = perfinject__backends(pi);
	if (got != backends) {
		fprintf(stderr, "bench: asked for backends %#x, got %#x\n",
			backends, got);
		perfinject__free(pi);
		errno = EOPNOTSUPP;
		return NULL;
	}
	return pi;
}

static struct perfinject *bench_new(unsigned int backends)
{
	return bench_new_flags(backends, 0);
}

static void free_keep_errno(struct perfinject *pi)
{
	int err = errno;

	perfinject__free(pi);
	errno = err;
}

/* The consumer side of the listening event: throw everything away. */
static void drain(void)
{
	if (!ring)
		return;
	__atomic_store_n(&ring->data_tail,
			 __atomic_load_n(&ring->data_head, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
}

/* The listening event: the dummy event on this process of the tests'
 * t_open_jit_code_event(), with attr.comm and not attr.jit_code. */
static int open_comm_event(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr.sample_id_all = 1;
	attr.exclude_kernel = 1;
	attr.comm = 1;
	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static int listen_start_fd(int fd)
{
	long pgsz = sysconf(_SC_PAGESIZE);

	ring_fd = fd;
	if (ring_fd < 0)
		return -errno;
	ring = mmap(NULL, (RING_PAGES + 1) * pgsz, PROT_READ | PROT_WRITE,
		    MAP_SHARED, ring_fd, 0);
	if (ring == MAP_FAILED) {
		ring = NULL;
		close(ring_fd);
		return -errno;
	}
	return 0;
}

static int listen_start(void)
{
	return listen_start_fd(t_open_jit_code_event());
}

static void listen_stop(void)
{
	if (ring)
		munmap(ring, (RING_PAGES + 1) * sysconf(_SC_PAGESIZE));
	if (ring_fd >= 0)
		close(ring_fd);
	ring = NULL;
	ring_fd = -1;
}

static double time_null(void)
{
	uint64_t t0 = now_ns();
	int i;

	for (i = 0; i < 2 * nr_ops; i++)
		syscall(SYS_getppid);
	return (double)(now_ns() - t0) / (2 * nr_ops);
}

/*
 * ns per operation for nr_ops loads then nr_ops unloads: one call each
 * when @per_call is 0, else @per_call at a time through
 * perfinject__batch().
 */
static double time_ops(struct perfinject *pi, int per_call)
{
	uint64_t t0;
	int half, i, n;

	drain();
	t0 = now_ns();
	if (!per_call) {
		for (i = 0; i < nr_ops; i++) {
			if (perfinject__load(pi, names[i], code_addr(i),
					     CODE_LEN, i + 1))
				return -1;
			if ((i & 255) == 255)
				drain();
		}
		for (i = 0; i < nr_ops; i++) {
			if (perfinject__unload(pi, code_addr(i)))
				return -1;
			if ((i & 255) == 255)
				drain();
		}
	} else {
		for (half = 0; half < 2; half++) {
			for (i = 0; i < nr_ops; i += n) {
				n = nr_ops - i < per_call ? nr_ops - i : per_call;
				if (perfinject__batch(pi, ops + half * nr_ops + i,
						      n) != n)
					return -1;
				drain();
			}
		}
	}
	return (double)(now_ns() - t0) / (2 * nr_ops);
}

struct config {
	const char *label;
	unsigned int backends;
	int listen;
};

static void run(const struct config *c)
{
	double single[MAX_ROUNDS], batched[MAX_ROUNDS];
	double xs[MAX_ROUNDS], xb[MAX_ROUNDS];
	double null_single, null_batched;
	struct perfinject *pi;
	int r;

	if (c->listen && listen_start()) {
		printf("%-28s  (no listening event: %s)\n", c->label,
		       strerror(errno));
		return;
	}
	for (r = 0; r < rounds; r++) {
		pi = bench_new(c->backends);
		if (!pi) {
			printf("%-28s  (unavailable: %s)\n", c->label,
			       strerror(errno));
			listen_stop();
			return;
		}
		null_single = time_null();
		single[r] = time_ops(pi, 0);
		null_batched = time_null();
		batched[r] = time_ops(pi, batch);
		perfinject__free(pi);
		if (single[r] < 0 || batched[r] < 0) {
			printf("%-28s  (an operation failed)\n", c->label);
			listen_stop();
			return;
		}
		xs[r] = single[r] / null_single;
		xb[r] = batched[r] / null_batched;
	}
	listen_stop();
	printf("%-28s", c->label);
	print_figure(single, xs);
	print_figure(batched, xb);
	putchar('\n');
}

static void run_ops(void)
{
	static const struct config configs[] = {
		{ "registry only", 0, 0 },
		{ "kernel, nobody listening", PERFINJECT_BACKEND_KERNEL, 0 },
		{ "kernel, one event listening", PERFINJECT_BACKEND_KERNEL, 1 },
		{ "perf-map file", PERFINJECT_BACKEND_PERFMAP, 0 },
		{ "jitdump file", PERFINJECT_BACKEND_JITDUMP, 0 },
	};
	size_t i;

	title("%d loads then %d unloads, median of %d rounds; batches of %d\n",
	      nr_ops, nr_ops, rounds, batch);
	printf("%-28s  %9s  %7s  %9s  %7s\n", "", "ns/op", "x null", "batch ns",
	       "x null");
	for (i = 0; i < ARRAY_SIZE(configs); i++)
		run(&configs[i]);
	printf("x null: the cost of one operation over that of getppid(2) in the same round\n");
}

/* ns per perf-map line written by hand: fprintf() then fflush(). */
static double time_fprintf(void)
{
	char path[PATH_MAX];
	uint64_t t0, t;
	int i, err;
	FILE *f;

	snprintf(path, sizeof(path), "%s/fprintf.map", dir);
	f = fopen(path, "we");
	if (!f)
		return -1;
	t0 = now_ns();
	for (i = 0; i < nr_ops; i++) {
		if (fprintf(f, "%lx %lx %s\n", (unsigned long)code_addr(i),
			    (unsigned long)CODE_LEN, names[i]) < 0 ||
		    fflush(f))
			break;
	}
	t = now_ns() - t0;
	err = errno;
	if (fclose(f) || i < nr_ops) {
		errno = i < nr_ops ? err : errno;
		return -1;
	}
	return (double)t / nr_ops;
}

/*
 * ns per JIT_CODE_LOAD record written by hand, with one writev() each;
 * no file header, which is written once. The pid and tid are taken
 * once, as a single-threaded writer can.
 */
static double time_writev(void)
{
	uint32_t pid = getpid(), tid = syscall(SYS_gettid);
	struct jr_code_load rec;
	char path[PATH_MAX];
	struct iovec iov[3];
	uint64_t t0, t;
	size_t name_len;
	int fd, i, err;

	snprintf(path, sizeof(path), "%s/writev.dump", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	t0 = now_ns();
	for (i = 0; i < nr_ops; i++) {
		name_len = strlen(names[i]) + 1;
		rec = (struct jr_code_load){
			.id		= JIT_CODE_LOAD,
			.total_size	= sizeof(rec) + name_len + CODE_LEN,
			.timestamp	= now_ns(),
			.pid		= pid,
			.tid		= tid,
			.vma		= code_addr(i),
			.code_addr	= code_addr(i),
			.code_size	= CODE_LEN,
			.code_index	= i + 1,
		};
		iov[0] = (struct iovec){ &rec, sizeof(rec) };
		iov[1] = (struct iovec){ names[i], name_len };
		iov[2] = (struct iovec){ (void *)(uintptr_t)code_addr(i),
					 CODE_LEN };
		if (writev(fd, iov, 3) != (ssize_t)rec.total_size)
			break;
	}
	t = now_ns() - t0;
	err = i < nr_ops ? (errno ? errno : EIO) : 0;
	close(fd);
	if (err) {
		errno = err;
		return -1;
	}
	return (double)t / nr_ops;
}

enum pair_kind { PAIR_LIB, PAIR_FPRINTF, PAIR_WRITEV, PAIR_LIB_WARM };

/* Live entries of PAIR_LIB_WARM: tables and entries stay in the cache. */
#define WARM_LIVE	100

/*
 * ns per load+unload pair with at most WARM_LIVE entries live: what the
 * library's own work costs when its data is in the cache, the floor
 * under what a large live set adds in cache misses.
 */
static double time_warm(struct perfinject *pi)
{
	int reps = nr_ops / WARM_LIVE > 0 ? nr_ops / WARM_LIVE : 1;
	int live = nr_ops < WARM_LIVE ? nr_ops : WARM_LIVE;
	uint64_t t0;
	int r, i;

	t0 = now_ns();
	for (r = 0; r < reps; r++) {
		for (i = 0; i < live; i++)
			if (perfinject__load(pi, names[i], code_addr(i),
					     CODE_LEN, i + 1))
				return -1;
		for (i = 0; i < live; i++)
			if (perfinject__unload(pi, code_addr(i)))
				return -1;
	}
	return (double)(now_ns() - t0) / ((double)reps * live);
}

struct pair_row {
	const char *label;
	enum pair_kind kind;
	unsigned int backends;
	unsigned int flags;
	int goal_row;	/* whose ratio this row's must not exceed; -1: none */
	double goal_x;	/* else the bound of its ratio; 0: a baseline */
};

/* ns per load+unload pair, or per record of a hand-written baseline. */
static double time_pair(const struct pair_row *row)
{
	struct perfinject *pi;
	double ns;

	if (row->kind == PAIR_FPRINTF)
		return time_fprintf();
	if (row->kind == PAIR_WRITEV)
		return time_writev();
	pi = bench_new_flags(row->backends, row->flags);
	if (!pi)
		return -1;
	if (row->kind == PAIR_LIB_WARM) {
		ns = time_warm(pi);
		free_keep_errno(pi);
		return ns;
	}
	ns = time_ops(pi, 0);
	free_keep_errno(pi);
	return ns < 0 ? -1 : 2 * ns;
}

static void run_pairs(void)
{
	static const struct pair_row rows[] = {
		{ "registry only", PAIR_LIB, 0, 0, -1, 1.0 },
		{ "registry only, 100 live", PAIR_LIB_WARM, 0, 0, -1, 0 },
		{ "fprintf+fflush", PAIR_FPRINTF, 0, 0, -1, 0 },
		{ "perf-map file", PAIR_LIB, PERFINJECT_BACKEND_PERFMAP, 0,
		  2, 0 },
		{ "perf-map file, no registry", PAIR_LIB,
		  PERFINJECT_BACKEND_PERFMAP, PERFINJECT_F_NO_REGISTRY, 2, 0 },
		{ "hand jitdump writev", PAIR_WRITEV, 0, 0, -1, 0 },
		{ "jitdump file", PAIR_LIB, PERFINJECT_BACKEND_JITDUMP, 0,
		  5, 0 },
		{ "jitdump file, no registry", PAIR_LIB,
		  PERFINJECT_BACKEND_JITDUMP, PERFINJECT_F_NO_REGISTRY, 5, 0 },
	};
	enum { NR_ROWS = ARRAY_SIZE(rows) };
	double ns[NR_ROWS][MAX_ROUNDS], x[NR_ROWS][MAX_ROUNDS];
	double med_x[NR_ROWS];
	int err[NR_ROWS] = { 0 };
	const struct pair_row *row;
	double null;
	int i, r;

	/* Rounds outside, so that a drift of the machine hits every row. */
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NR_ROWS; i++) {
			if (err[i])
				continue;
			null = time_null();
			ns[i][r] = time_pair(&rows[i]);
			if (ns[i][r] < 0)
				err[i] = errno ? errno : EIO;
			x[i][r] = ns[i][r] / null;
		}
	}

	title("Per load+unload pair, %d pairs, median of %d rounds\n", nr_ops,
	      rounds);
	printf("%-28s  %9s  %7s  %s\n", "", "ns/pair", "x null", "goal");
	for (i = 0; i < NR_ROWS; i++) {
		row = &rows[i];
		if (err[i]) {
			printf("%-28s  (unavailable: %s)\n", row->label,
			       strerror(err[i]));
			continue;
		}
		printf("%-28s", row->label);
		print_figure(ns[i], x[i]);
		med_x[i] = median(x[i], rounds);
		if (row->goal_row >= 0 && err[row->goal_row])
			printf("  <= %s: (no baseline)\n",
			       rows[row->goal_row].label);
		else if (row->goal_row >= 0)
			printf("  <= %s: %s\n", rows[row->goal_row].label,
			       verdict(med_x[i], med_x[row->goal_row]));
		else if (row->goal_x)
			printf("  <= %.2fx null: %s\n", row->goal_x,
			       verdict(med_x[i], row->goal_x));
		else if (row->kind == PAIR_LIB_WARM)
			printf("  (the library's work, in cache)\n");
		else
			printf("  (baseline)\n");
	}
	printf("100 live: the same pairs over %d entries, again and again\n"
	       "fprintf+fflush: one perf-map line per pair\n"
	       "hand jitdump writev: one JIT_CODE_LOAD record per pair (%zu-byte header, name,\n"
	       "%d bytes of code)\n",
	       WARM_LIVE, sizeof(struct jr_code_load), CODE_LEN);
}

static void run_batch(void)
{
	static const int sizes[] = { 1, 16, 256, 1024 };
	enum { NR_SIZES = ARRAY_SIZE(sizes) };
	double ns[NR_SIZES][MAX_ROUNDS], x[NR_SIZES][MAX_ROUNDS];
	struct perfinject *pi;
	char label[32];
	double null;
	int i, r;

	title("Registry only, %d loads then %d unloads in batches, median of %d rounds\n",
	      nr_ops, nr_ops, rounds);
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NR_SIZES; i++) {
			pi = bench_new(0);
			if (!pi) {
				printf("(unavailable: %s)\n", strerror(errno));
				return;
			}
			null = time_null();
			ns[i][r] = time_ops(pi, sizes[i]);
			free_keep_errno(pi);
			if (ns[i][r] < 0) {
				printf("(an operation failed: %s)\n",
				       strerror(errno));
				return;
			}
			x[i][r] = ns[i][r] / null;
		}
	}
	printf("%-28s  %9s  %7s  %s\n", "", "ns/op", "x null", "goal");
	for (i = 0; i < NR_SIZES; i++) {
		snprintf(label, sizeof(label), "batches of %d", sizes[i]);
		printf("%-28s", label);
		print_figure(ns[i], x[i]);
		if (sizes[i] == 1024)
			printf("  <= 0.25x null: %s",
			       verdict(median(x[i], rounds), 0.25));
		putchar('\n');
	}
}

/* Live entries the finds of "threads" (c) look among, and as many more. */
#define FIND_LIVE	1024
/*
 * A thread of "threads" loads and unloads its OPS entries thread_passes
 * times (-P), and a find costs about a tenth of a load or an unload: on
 * the host each timing lasts a tenth of a second or more at 1 thread,
 * well above the scheduler's noise.
 */
#define FINDS_PER_OP	10

enum thread_set {
	SET_SHARED,	/* (a) loads and unloads, one handle for all */
	SET_OWN,	/* (b) loads and unloads, a handle per thread */
	SET_FINDS,	/* (c) finds on one handle, one thread writing */
	NR_SETS,
};

static const char *const set_labels[NR_SETS] = {
	[SET_SHARED]	= "(a) one handle, load+unload",
	[SET_OWN]	= "(b) a handle each, load+unload",
	[SET_FINDS]	= "(c) finds, 1 thread writing",
};

/* Short names for -p output and bench/compare-urcu.sh. */
static const char *const set_keys[NR_SETS] = {
	[SET_SHARED]	= "shared",
	[SET_OWN]	= "own",
	[SET_FINDS]	= "finds",
};

struct worker {
	struct perfinject *pi;
	pthread_barrier_t *start;
	pthread_t thread;
	int id;
	int err;
	int *stop;	/* the writer of (c): run until set */
	/*
	 * When the thread left the barrier and when it was done: the main
	 * thread may get its CPU back only later, on a busy machine.
	 */
	uint64_t t_start;
	uint64_t t_end;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	long base = (long)w->id * nr_names;
	int pass, i;

	pthread_barrier_wait(w->start);
	w->t_start = now_ns();
	for (pass = 0; pass < thread_passes; pass++) {
		for (i = 0; i < nr_ops; i++) {
			w->err = perfinject__load(w->pi, names[i],
						  code_addr(base + i),
						  CODE_LEN, base + i + 1);
			if (w->err)
				return NULL;
		}
		for (i = 0; i < nr_ops; i++) {
			w->err = perfinject__unload(w->pi,
						    code_addr(base + i));
			if (w->err)
				return NULL;
		}
	}
	w->t_end = now_ns();
	return NULL;
}

/*
 * FINDS_PER_OP times as many finds as a worker_run() makes operations,
 * of addresses among FIND_LIVE entries that stay and FIND_LIVE that the
 * writer loads and unloads: hits and misses.
 */
static void *finder_run(void *arg)
{
	struct worker *w = arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL * (w->id + 1);
	long i, n = (long)FINDS_PER_OP * thread_passes * 2 * nr_ops;
	struct perfinject_code c;
	char name[64];
	int ret;

	pthread_barrier_wait(w->start);
	w->t_start = now_ns();
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ret = perfinject__find(w->pi, code_addr(x % (2 * FIND_LIVE)),
				       &c, name, sizeof(name));
		if (ret && ret != -ENOENT) {
			w->err = ret;
			return NULL;
		}
	}
	w->t_end = now_ns();
	return NULL;
}

/* (c)'s writer: loads and unloads, FIND_LIVE / 2 live, until stopped. */
static void *churn_run(void *arg)
{
	struct worker *w = arg;
	long k, at, old;

	pthread_barrier_wait(w->start);
	for (k = 0; !__atomic_load_n(w->stop, __ATOMIC_RELAXED); k++) {
		at = FIND_LIVE + k % FIND_LIVE;
		old = FIND_LIVE + (k - FIND_LIVE / 2) % FIND_LIVE;
		w->err = perfinject__load(w->pi, names[at], code_addr(at),
					  CODE_LEN, at + 1);
		if (!w->err && k >= FIND_LIVE / 2)
			w->err = perfinject__unload(w->pi, code_addr(old));
		if (w->err)
			return NULL;
	}
	return NULL;
}

static void start_thread(struct worker *w, void *(*fn)(void *))
{
	int err = pthread_create(&w->thread, NULL, fn, w);

	if (err) {
		/* Those started would wait at the barrier for ever. */
		fprintf(stderr, "bench: pthread_create: %s\n", strerror(err));
		exit(1);
	}
}

/*
 * ns per operation, over all @nr threads' operations, of @set: -1 with
 * errno set if one failed. A process has one registry and one set of
 * files however many handles it has, so a runtime can give each
 * compiler thread its own (b).
 */
static double time_threads(int nr, enum thread_set set)
{
	struct perfinject *pi[MAX_THREADS] = { NULL };
	int nr_pi = set == SET_OWN ? nr : 1;
	struct worker w[MAX_THREADS], writer;
	pthread_barrier_t start;
	int i, err = 0, stop = 0;
	uint64_t t0, t1;

	for (i = 0; i < nr_pi; i++) {
		pi[i] = bench_new(0);
		if (!pi[i]) {
			while (i--)
				free_keep_errno(pi[i]);
			return -1;
		}
	}
	if (set == SET_FINDS) {
		for (i = 0; i < FIND_LIVE && !err; i++)
			err = perfinject__load(pi[0], names[i], code_addr(i),
					       CODE_LEN, i + 1);
		if (err) {
			free_keep_errno(pi[0]);
			return -1;
		}
	}
	pthread_barrier_init(&start, NULL, nr + 1 + (set == SET_FINDS));
	if (set == SET_FINDS) {
		writer = (struct worker){ .pi = pi[0], .start = &start,
					  .stop = &stop };
		start_thread(&writer, churn_run);
	}
	for (i = 0; i < nr; i++) {
		w[i] = (struct worker){ .pi = pi[set == SET_OWN ? i : 0],
					.start = &start, .id = i };
		start_thread(&w[i], set == SET_FINDS ? finder_run :
			     worker_run);
	}
	pthread_barrier_wait(&start);
	t0 = UINT64_MAX;
	t1 = 0;
	for (i = 0; i < nr; i++) {
		pthread_join(w[i].thread, NULL);
		if (w[i].err && !err)
			err = w[i].err;
		if (w[i].t_start < t0)
			t0 = w[i].t_start;
		if (w[i].t_end > t1)
			t1 = w[i].t_end;
	}
	if (set == SET_FINDS) {
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		pthread_join(writer.thread, NULL);
		if (writer.err && !err)
			err = writer.err;
	}
	pthread_barrier_destroy(&start);
	for (i = 0; i < nr_pi; i++)
		perfinject__free(pi[i]);
	if (err) {
		errno = -err;
		return -1;
	}
	return (double)(t1 - t0) / (2.0 * nr * nr_ops * thread_passes *
			    (set == SET_FINDS ? FINDS_PER_OP : 1));
}

static void run_threads(void)
{
	static const int counts[] = { 1, 2, 4, 8, MAX_THREADS };
	enum { NR_COUNTS = ARRAY_SIZE(counts) };
	double ns[NR_SETS][NR_COUNTS][MAX_ROUNDS];
	double rel[NR_SETS][NR_COUNTS][MAX_ROUNDS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	double worst;
	int set, i, r;

	title("Registry only, threads, median of %d rounds, %ld CPUs online: (a), (b) %d times\n"
	      "%d loads then %d unloads per thread; (c) %ld finds per thread while one\n"
	      "more loads and unloads\n", rounds, cpus, thread_passes, nr_ops,
	      nr_ops, (long)FINDS_PER_OP * thread_passes * 2 * nr_ops);
	/* Warm up: the heap, the tables, urcu's reader registration. */
	for (set = 0; set < NR_SETS; set++)
		if (time_threads(1, set) < 0) {
			printf("(an operation failed: %s)\n", strerror(errno));
			return;
		}
	/* Rounds outside, so that a drift of the machine hits every row. */
	for (r = 0; r < rounds; r++) {
		for (set = 0; set < NR_SETS; set++) {
			for (i = 0; i < NR_COUNTS; i++) {
				ns[set][i][r] = time_threads(counts[i], set);
				if (ns[set][i][r] < 0) {
					printf("(an operation failed: %s)\n",
					       strerror(errno));
					return;
				}
				/* Over 1 thread of the same set and round. */
				rel[set][i][r] = ns[set][i][r] / ns[set][0][r];
			}
		}
	}
	printf("%-32s", "per operation, over 1 thread");
	for (i = 0; i < NR_COUNTS; i++)
		printf("  %3d thr", counts[i]);
	printf("  %d <= 2x 1\n", MAX_THREADS);
	for (set = 0; set < NR_SETS; set++) {
		printf("%-32s", set_labels[set]);
		for (i = 0; i < NR_COUNTS; i++)
			printf("  %7.2f", median(rel[set][i], rounds));
		worst = median(rel[set][NR_COUNTS - 1], rounds);
		printf("  %s\n", verdict(worst, 2.0));
	}
	printf("per operation: wall time over the operations of all threads, as a multiple of\n"
	       "that of 1 thread in the same round. Lower is better; with %ld CPUs, threads\n"
	       "that never wait for each other read 1/%ld from %ld threads on. Past %ld\n"
	       "threads this measures contention, not parallelism.\n",
	       cpus, cpus, cpus, cpus);
	/* For bench/compare-urcu.sh, which prints only ratios of them. */
	if (print_raw) {
		for (set = 0; set < NR_SETS; set++)
			for (i = 0; i < NR_COUNTS; i++)
				for (r = 0; r < rounds; r++)
					printf("raw threads %s %d %.2f\n",
					       set_keys[set], counts[i],
					       ns[set][i][r]);
	}
}

/* us per fork() and waitpid() of a child that exits at once: median. */
static double time_fork(void)
{
	double *us = calloc(nr_forks, sizeof(*us)), m;
	uint64_t t0;
	int i, status;
	pid_t pid;

	if (!us)
		return -1;
	for (i = 0; i < nr_forks; i++) {
		t0 = now_ns();
		pid = fork();
		if (!pid)
			_exit(0);
		if (pid < 0 || waitpid(pid, &status, 0) != pid) {
			free(us);
			return -1;
		}
		us[i] = (now_ns() - t0) / 1e3;
	}
	m = median(us, nr_forks);
	free(us);
	return m;
}

static void fork_row(const char *label, double us, double before, int goal)
{
	printf("%-28s  %9.1f  %7.2f", label, us, us / before);
	if (goal)
		printf("  <= 1.50x (a): %s", verdict(us / before, 1.5));
	putchar('\n');
}

/* @before: time_fork() from before any handle existed. */
static void run_fork(double before)
{
	struct perfinject *pi;
	double live, after;
	char label[32];
	int i;

	title("fork() and waitpid() of a child that exits at once, median of %d forks\n",
	      nr_forks);
	printf("%-28s  %9s  %7s  %s\n", "", "us/fork", "x (a)", "goal");
	if (before < 0) {
		printf("(fork failed: %s)\n", strerror(errno));
		return;
	}
	fork_row("(a) before any handle", before, before, 0);

	pi = bench_new(0);
	if (!pi) {
		printf("(unavailable: %s)\n", strerror(errno));
		return;
	}
	for (i = 0; i < FORK_ENTRIES; i++) {
		if (perfinject__load(pi, names[i], code_addr(i), CODE_LEN,
				     i + 1)) {
			printf("(a load failed: %s)\n", strerror(errno));
			perfinject__free(pi);
			return;
		}
	}
	live = time_fork();
	free_keep_errno(pi);
	after = time_fork();
	if (live < 0 || after < 0) {
		printf("(fork failed: %s)\n", strerror(errno));
		return;
	}
	snprintf(label, sizeof(label), "(b) handle, %d entries",
		 FORK_ENTRIES);
	fork_row(label, live, before, 1);
	fork_row("(c) after perfinject__free", after, before, 1);
}

/* ns per call of a prctl that does nothing but answer. */
static double time_prctl(int option, unsigned long arg2)
{
	uint64_t t0 = now_ns();
	int i;

	for (i = 0; i < nr_ops; i++)
		prctl(option, arg2, 0UL, 0UL, 0UL);
	return (double)(now_ns() - t0) / nr_ops;
}

static void run_floor(void)
{
	/* No entries: the argument structure is read, checked and refused. */
	static struct perf_jit_code_args none = { .size = sizeof(none) };
	double dumpable[MAX_ROUNDS], probe[MAX_ROUNDS], args[MAX_ROUNDS];
	double xd[MAX_ROUNDS], xp[MAX_ROUNDS], xa[MAX_ROUNDS];
	double null;
	int r;

	for (r = 0; r < rounds; r++) {
		null = time_null();
		dumpable[r] = time_prctl(PR_GET_DUMPABLE, 0);
		xd[r] = dumpable[r] / null;
		null = time_null();
		probe[r] = time_prctl(PR_PERF_JIT_CODE, 0);
		xp[r] = probe[r] / null;
		null = time_null();
		args[r] = time_prctl(PR_PERF_JIT_CODE, (unsigned long)&none);
		xa[r] = args[r] / null;
	}
	printf("%-28s", "prctl(PR_GET_DUMPABLE)");
	print_figure(dumpable, xd);
	printf("\n%-28s", "prctl(PR_PERF_JIT_CODE, 0)");
	print_figure(probe, xp);
	printf("\n%-28s", "arguments only (0 entries)");
	print_figure(args, xa);
	putchar('\n');
}

/*
 * ns per entry of nr_ops LOAD entries (UNLOAD entries, which have no
 * name, with @unload), @per_call to a PR_PERF_JIT_CODE.
 */
static double time_raw(int per_call, bool unload)
{
	struct perf_jit_code_entry e[64];
	struct perf_jit_code_args args = {
		.size		= sizeof(args),
		.entries	= (uintptr_t)e,
		.entry_size	= sizeof(e[0]),
	};
	uint64_t t0;
	int i, j, n;

	drain();
	t0 = now_ns();
	for (i = 0; i < nr_ops; i += n) {
		n = nr_ops - i < per_call ? nr_ops - i : per_call;
		for (j = 0; j < n; j++)
			e[j] = unload ? (struct perf_jit_code_entry){
				.op		= PERF_JIT_CODE_UNLOAD,
				.addr		= code_addr(i + j),
				.len		= CODE_LEN,
			} : (struct perf_jit_code_entry){
				.op		= PERF_JIT_CODE_LOAD,
				.addr		= code_addr(i + j),
				.len		= CODE_LEN,
				.code_index	= i + j + 1,
				.name		= (uintptr_t)names[i + j],
			};
		args.nr_entries = n;
		if (prctl(PR_PERF_JIT_CODE, (unsigned long)&args, 0UL, 0UL,
			  0UL) != n)
			return -1;
		if ((i & 255) + n > 255)
			drain();
	}
	return (double)(now_ns() - t0) / nr_ops;
}

enum raw_listener { RAW_NONE, RAW_OTHER, RAW_SELF };

static void run_raw(const char *label, enum raw_listener who, bool unload)
{
	double one[MAX_ROUNDS], many[MAX_ROUNDS];
	double x1[MAX_ROUNDS], x64[MAX_ROUNDS];
	double null_one, null_many;
	pid_t child = -1;
	int fd = -1, r;

	if (who == RAW_OTHER) {
		child = fork();
		if (!child) {
			pause();
			_exit(0);
		}
		fd = t_open_jit_code_event_pid(child);
	} else if (who == RAW_SELF) {
		fd = listen_start() ? -1 : ring_fd;
	}
	if (who != RAW_NONE && fd < 0) {
		printf("%-28s  (no event: %s)\n", label, strerror(errno));
		goto out;
	}
	for (r = 0; r < rounds; r++) {
		null_one = time_null();
		one[r] = time_raw(1, unload);
		null_many = time_null();
		many[r] = time_raw(64, unload);
		if (one[r] < 0 || many[r] < 0) {
			printf("%-28s  (the prctl failed: %s)\n", label,
			       strerror(errno));
			goto out;
		}
		x1[r] = one[r] / null_one;
		x64[r] = many[r] / null_many;
	}
	printf("%-28s", label);
	print_figure(one, x1);
	print_figure(many, x64);
	putchar('\n');
out:
	if (who == RAW_SELF)
		listen_stop();
	else if (fd >= 0)
		close(fd);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
}

/* ns per PR_SET_NAME, each a PERF_RECORD_COMM to a COMM listener */
static double time_set_name(void)
{
	uint64_t t0;
	int i;

	drain();
	t0 = now_ns();
	for (i = 0; i < nr_ops; i++) {
		if (prctl(PR_SET_NAME, (unsigned long)(i & 1 ? "bench-a" : "bench-b"),
			  0UL, 0UL, 0UL))
			return -1;
		if ((i & 255) == 255)
			drain();
	}
	return (double)(now_ns() - t0) / nr_ops;
}

/* The anchor: PR_SET_NAME, without and with a COMM listener. */
static void run_comm(const char *label, bool listen)
{
	double ns[MAX_ROUNDS], x[MAX_ROUNDS];
	char comm[16] = "";
	double null;
	int r;

	prctl(PR_GET_NAME, (unsigned long)comm, 0UL, 0UL, 0UL);
	if (listen && listen_start_fd(open_comm_event())) {
		printf("%-28s  (no event: %s)\n", label, strerror(errno));
		return;
	}
	for (r = 0; r < rounds; r++) {
		null = time_null();
		ns[r] = time_set_name();
		if (ns[r] < 0) {
			printf("%-28s  (PR_SET_NAME failed: %s)\n", label, strerror(errno));
			goto out;
		}
		x[r] = ns[r] / null;
	}
	printf("%-28s", label);
	print_figure(ns, x);
	putchar('\n');
out:
	if (listen)
		listen_stop();
	prctl(PR_SET_NAME, (unsigned long)comm, 0UL, 0UL, 0UL);
}

static void run_kernel(void)
{
	title("PR_PERF_JIT_CODE alone, %d LOAD entries, median of %d rounds\n",
	      nr_ops, rounds);
	printf("%-28s  %9s  %7s  %9s  %7s\n", "", "1/call ns", "x null",
	       "64/call ns", "x null");
	if (prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 0UL, 0UL) < 0) {
		printf("(the kernel has no PR_PERF_JIT_CODE)\n");
	} else {
		run_floor();
		/* The kernel turns its key off a second after the last event. */
		sleep(2);
		run_raw("no jit_code event", RAW_NONE, false);
		run_raw("an event on another task", RAW_OTHER, false);
		run_raw("one event listening", RAW_SELF, false);
		/* The share of a load's name: the same with UNLOADs */
		run_raw("UNLOADs, nothing listens", RAW_NONE, true);
		run_raw("UNLOADs, one listening", RAW_SELF, true);
		run_comm("PR_SET_NAME, nothing listens", false);
		run_comm("PR_SET_NAME, a COMM listener", true);
	}
	printf("64/call: per entry, in calls of 64 entries\n");
	printf("PR_SET_NAME: the kernel's COMM record, the anchor of one entry\n");
}

/* Bytes the process holds: resident, and allocated through malloc. */
struct mem_use {
	uint64_t	rss;
	uint64_t	heap;
};

static struct mem_use mem_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	struct mem_use m = { .heap = mi.uordblks + mi.hblkhd };
	unsigned long size, resident;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f && fscanf(f, "%lu %lu", &size, &resident) == 2)
		m.rss = (uint64_t)resident * sysconf(_SC_PAGESIZE);
	if (f)
		fclose(f);
	return m;
}

struct mem_row {
	double		rss;		/* bytes per live function */
	double		heap;
	double		file;		/* of the backend's file */
	int		err;
};

/*
 * In a child of its own, so that nothing an earlier row freed is reused:
 * a handle with @backends, MEM_FUNCS loads of @names; what the process
 * and the backend's file grew by, per function.
 */
static struct mem_row mem_measure(unsigned int backends, char (*mnames)[MEM_NAME],
				  int n)
{
	struct mem_row row = { .err = 0 };
	struct mem_use before, after;
	struct perfinject *pi;
	char path[PATH_MAX];
	struct stat st;
	int fds[2], i;
	pid_t child;

	if (pipe(fds))
		return (struct mem_row){ .err = errno };
	child = fork();
	if (child < 0)
		return (struct mem_row){ .err = errno };
	if (!child) {
		close(fds[0]);
		before = mem_use();
		pi = bench_new(backends);
		for (i = 0; pi && i < n; i++)
			if (perfinject__load(pi, mnames[i], code_addr(i), CODE_LEN, i + 1))
				break;
		if (!pi || i < n) {
			row.err = errno ? errno : EIO;
		} else {
			after = mem_use();
			row.rss = (double)(after.rss - before.rss) / n;
			row.heap = (double)(after.heap - before.heap) / n;
			snprintf(path, sizeof(path), "%s/%s-%d.%s", dir,
				 backends == PERFINJECT_BACKEND_JITDUMP ? "jit" : "perf",
				 (int)getpid(),
				 backends == PERFINJECT_BACKEND_JITDUMP ? "dump" : "map");
			if (backends && !stat(path, &st))
				row.file = (double)st.st_size / n;
			if (backends)
				unlink(path);
		}
		if (write(fds[1], &row, sizeof(row)) != sizeof(row))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &row, sizeof(row)) != sizeof(row))
		row.err = EIO;
	close(fds[0]);
	waitpid(child, NULL, 0);
	return row;
}

static void run_memory(void)
{
	static const struct {
		const char	*label;
		unsigned int	backends;
	} rows[] = {
		{ "the registry alone", 0 },
		{ "and the perf-map backend", PERFINJECT_BACKEND_PERFMAP },
		{ "and the jitdump backend", PERFINJECT_BACKEND_JITDUMP },
	};
	char (*mnames)[MEM_NAME];
	int n = MEM_FUNCS, i;
	size_t name_bytes = 0;
	uint64_t rec;

	if (n > nr_names * MAX_THREADS)
		n = nr_names * MAX_THREADS;
	mnames = calloc(n, sizeof(*mnames));
	if (!mnames) {
		perror("bench");
		return;
	}
	/* Names as long as a JVM's, all different */
	for (i = 0; i < n; i++) {
		snprintf(mnames[i], sizeof(mnames[i]),
			 "org.example.app.Service%d.handle%d(java.lang.String, int)",
			 i / 64, i % 64);
		name_bytes += strlen(mnames[i]);
	}
	title("Memory per live function: %d functions of %d bytes, names of %.1f bytes\n",
	      n, CODE_LEN, (double)name_bytes / n);
	printf("%-28s  %9s  %9s  %9s\n", "", "RSS B", "malloc B", "file B");
	for (i = 0; i < (int)ARRAY_SIZE(rows); i++) {
		struct mem_row row = mem_measure(rows[i].backends, mnames, n);

		if (row.err) {
			printf("%-28s  (failed: %s)\n", rows[i].label, strerror(row.err));
			continue;
		}
		printf("%-28s  %9.1f  %9.1f", rows[i].label, row.rss, row.heap);
		if (rows[i].backends)
			printf("  %9.1f", row.file);
		putchar('\n');
	}
	/* PERF_RECORD_JIT_CODE: header and fields, name, sample_id */
	rec = 8 + 48 + ((name_bytes / n + 1 + 7) & ~7UL) + 16;
	printf("%-28s  %9s  %9s  %9" PRIu64 "\n", "a PERF_RECORD_JIT_CODE LOAD", "-", "-", rec);
	printf("RSS, malloc: what the process grew by, per function (in a child of its own)\n");
	printf("file: the backend's file, per function; the record: header, fields, name\n");
	printf("  and the 16 bytes of sample_id of (pid, tid) and time, in the ring and in\n");
	printf("  perf.data (perf record adds 8 for each of id, stream id, cpu it samples)\n");
	free(mnames);
}

static void print_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [-n OPS] [-b BATCH] [-r ROUNDS] [-f FORKS] [-P PASSES] [-p]\n"
		"       [-s SECTION[,...]]\n"
		"  -n OPS      loads, then as many unloads, per timing and per thread\n"
		"              (default 20000)\n"
		"  -b BATCH    operations per perfinject__batch() in \"ops\" (default 256)\n"
		"  -r ROUNDS   rounds to take the median of, 1 to %d (default 5)\n"
		"  -f FORKS    forks to take the median of (default 200)\n"
		"  -P PASSES   times each thread of \"threads\" goes through its OPS\n"
		"              (default 10; fewer in an emulated guest)\n"
		"  -p          \"threads\" prints each round's figures as lines, too\n"
		"  -s SECTION  fork, ops, pairs, batch, threads, kernel, memory or all (the\n"
		"              default); repeat -s or separate with commas for several\n",
		prog, MAX_ROUNDS);
}

/* Adds the sections named in the comma-separated @list to @want. */
static int parse_sections(char *list, unsigned int *want)
{
	char *name;
	int s;

	while ((name = strsep(&list, ","))) {
		if (!strcmp(name, "all")) {
			*want |= (1U << NR_SECTIONS) - 1;
			continue;
		}
		for (s = 0; s < NR_SECTIONS; s++)
			if (!strcmp(name, section_names[s]))
				break;
		if (s == NR_SECTIONS)
			return -1;
		*want |= 1U << s;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int want = 0;
	double fork_before = -1;
	int opt, i;

	while ((opt = getopt(argc, argv, "n:b:r:f:s:P:ph")) != -1) {
		switch (opt) {
		case 'n':
			nr_ops = atoi(optarg);
			break;
		case 'b':
			batch = atoi(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'f':
			nr_forks = atoi(optarg);
			break;
		case 'p':
			print_raw = true;
			break;
		case 'P':
			thread_passes = atoi(optarg);
			break;
		case 's':
			if (parse_sections(optarg, &want)) {
				fprintf(stderr, "bench: unknown section in -s %s\n",
					optarg);
				print_usage(stderr, argv[0]);
				return 2;
			}
			break;
		case 'h':
			print_usage(stdout, argv[0]);
			return 0;
		default:
			print_usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind < argc || nr_ops < 1 || batch < 1 || rounds < 1 ||
	    rounds > MAX_ROUNDS || nr_forks < 1 || thread_passes < 1) {
		fprintf(stderr, "bench: bad -n, -b, -r, -f or -P, or an argument\n");
		print_usage(stderr, argv[0]);
		return 2;
	}
	if (!want)
		want = (1U << NR_SECTIONS) - 1;
	/* Backends 0 with the environment honoured: the registry alone. */
	setenv("PERFINJECT_BACKENDS", "none", 1);

	nr_names = nr_ops > FORK_ENTRIES ? nr_ops : FORK_ENTRIES;
	if (nr_names < 2 * FIND_LIVE)
		nr_names = 2 * FIND_LIVE;
	ops = calloc(2 * nr_ops, sizeof(*ops));
	names = calloc(nr_names, sizeof(*names));
	/* Room for every thread's addresses; only the first part is written. */
	code = mmap(NULL, (size_t)CODE_LEN * nr_names * MAX_THREADS,
		    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ops || !names || code == MAP_FAILED) {
		perror("bench");
		return 1;
	}
	/* Private, and removed at exit with the files of the file backends. */
	dir = t_tmpdir();
	memset(code, 0xc3, (size_t)CODE_LEN * nr_names);
	for (i = 0; i < nr_names; i++)
		snprintf(names[i], sizeof(names[i]), "bench.fn%d(I)V", i);
	for (i = 0; i < nr_ops; i++) {
		ops[i] = (struct perfinject_code_op){
			.op = PERFINJECT_OP_LOAD, .addr = code_addr(i),
			.len = CODE_LEN, .code_index = i + 1, .name = names[i],
		};
		ops[nr_ops + i] = (struct perfinject_code_op){
			.op = PERFINJECT_OP_UNLOAD, .addr = code_addr(i),
		};
	}

	/* Nothing has called the library yet: see the top of the file. */
	if (want & (1U << SEC_FORK))
		fork_before = time_fork();

	if (want & (1U << SEC_FORK))
		run_fork(fork_before);
	if (want & (1U << SEC_OPS))
		run_ops();
	if (want & (1U << SEC_PAIRS))
		run_pairs();
	if (want & (1U << SEC_BATCH))
		run_batch();
	if (want & (1U << SEC_THREADS))
		run_threads();
	if (want & (1U << SEC_KERNEL))
		run_kernel();
	if (want & (1U << SEC_MEMORY))
		run_memory();
	return 0;
}
