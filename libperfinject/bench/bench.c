// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cost of describing code to perf, per operation, as a ratio to a null
 * system call measured in the same run. Timings inside an emulated guest
 * are not real time; the ratios are what to compare.
 *
 *   bench [-n OPS] [-b BATCH] [-r ROUNDS]
 *
 * For each backend (the registry alone, the kernel, perf-map, jitdump)
 * and, for the kernel, with and without a perf event that listens
 * (attr.jit_code, per task, its ring buffer drained as it fills), it
 * times OPS loads followed by OPS unloads, one call each and then in
 * batches of BATCH operations, and prints the median over ROUNDS of the
 * nanoseconds per operation and its ratio to getppid(2).
 *
 * Then the kernel's own path, without the library: PR_PERF_JIT_CODE with
 * one LOAD entry per call, and with batches of 64 (per entry), while no
 * jit_code event exists, while one exists for another process only, and
 * while one listens to this process; beside two prctls that only answer
 * (PR_GET_DUMPABLE, and the probe): the floor of any prctl.
 */

#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <perfinject/perfinject.h>
#include "../src/uapi_jit_code.h"
#include "helpers.h"

#define RING_PAGES	256

static int nr_ops = 20000, batch = 256, rounds = 5;
static struct perfinject_code_op *ops;
static char (*names)[40];
static unsigned char *code;

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

/* The consumer side of the listening event: throw everything away. */
static void drain(void)
{
	if (!ring)
		return;
	__atomic_store_n(&ring->data_tail,
			 __atomic_load_n(&ring->data_head, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
}

static int listen_start(void)
{
	long pgsz = sysconf(_SC_PAGESIZE);

	ring_fd = t_open_jit_code_event();
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

/* ns per operation for nr_ops loads then nr_ops unloads. */
static double time_ops(struct perfinject *pi, int batched)
{
	uint64_t t0, t;
	int i, n;

	drain();
	t0 = now_ns();
	if (!batched) {
		for (i = 0; i < nr_ops; i++) {
			if (perfinject__load(pi, names[i], (uintptr_t)code + 64 * i,
					     64, i + 1))
				return -1;
			if ((i & 255) == 255)
				drain();
		}
		for (i = 0; i < nr_ops; i++) {
			if (perfinject__unload(pi, (uintptr_t)code + 64 * i))
				return -1;
			if ((i & 255) == 255)
				drain();
		}
	} else {
		for (i = 0; i < nr_ops; i += n) {
			n = nr_ops - i < batch ? nr_ops - i : batch;
			if (perfinject__batch(pi, ops + i, n) != n)
				return -1;
			drain();
		}
		for (i = 0; i < nr_ops; i++)
			ops[nr_ops + i] = (struct perfinject_code_op){
				.op = PERFINJECT_OP_UNLOAD,
				.addr = (uintptr_t)code + 64 * i,
			};
		for (i = 0; i < nr_ops; i += n) {
			n = nr_ops - i < batch ? nr_ops - i : batch;
			if (perfinject__batch(pi, ops + nr_ops + i, n) != n)
				return -1;
			drain();
		}
	}
	t = now_ns() - t0;
	return (double)t / (2 * nr_ops);
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
	double dumpable[64], probe[64], null[64];
	int r;

	for (r = 0; r < rounds; r++) {
		null[r] = time_null();
		dumpable[r] = time_prctl(PR_GET_DUMPABLE, 0);
		probe[r] = time_prctl(PR_PERF_JIT_CODE, 0);
	}
	qsort(null, rounds, sizeof(double), cmp_double);
	qsort(dumpable, rounds, sizeof(double), cmp_double);
	qsort(probe, rounds, sizeof(double), cmp_double);
	printf("%-28s  %9.0f  %7.2f\n", "prctl(PR_GET_DUMPABLE)",
	       dumpable[rounds / 2], dumpable[rounds / 2] / null[rounds / 2]);
	printf("%-28s  %9.0f  %7.2f\n", "prctl(PR_PERF_JIT_CODE, 0)",
	       probe[rounds / 2], probe[rounds / 2] / null[rounds / 2]);
}

/* ns per entry of nr_ops LOAD entries, @per_call to a PR_PERF_JIT_CODE. */
static double time_raw(int per_call)
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
			e[j] = (struct perf_jit_code_entry){
				.op		= PERF_JIT_CODE_LOAD,
				.addr		= (uintptr_t)code + 64 * (i + j),
				.len		= 64,
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

static void run_raw(const char *label, enum raw_listener who)
{
	double one[64], many[64], null[64];
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
		null[r] = time_null();
		one[r] = time_raw(1);
		many[r] = time_raw(64);
		if (one[r] < 0 || many[r] < 0) {
			printf("%-28s  (the prctl failed: %s)\n", label,
			       strerror(errno));
			goto out;
		}
	}
	qsort(null, rounds, sizeof(double), cmp_double);
	qsort(one, rounds, sizeof(double), cmp_double);
	qsort(many, rounds, sizeof(double), cmp_double);
	printf("%-28s  %9.0f  %7.2f  %9.0f  %7.2f\n", label,
	       one[rounds / 2], one[rounds / 2] / null[rounds / 2],
	       many[rounds / 2], many[rounds / 2] / null[rounds / 2]);
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

struct config {
	const char *label;
	unsigned int backends;
	int listen;
};

static void run(const struct config *c, char *dir)
{
	double single[64], batched[64], null[64];
	struct perfinject *pi;
	int r;

	if (c->listen && listen_start()) {
		printf("%-28s  (no listening event: %s)\n", c->label,
		       strerror(errno));
		return;
	}
	for (r = 0; r < rounds; r++) {
		PERFINJECT_OPTS(opts, .backends = c->backends, .dir = dir,
				.flags = PERFINJECT_F_NO_ENV |
					 (c->backends ? PERFINJECT_F_STRICT : 0));
		pi = perfinject__new(&opts);
		if (!pi) {
			printf("%-28s  (unavailable: %s)\n", c->label,
			       strerror(errno));
			listen_stop();
			return;
		}
		null[r] = time_null();
		single[r] = time_ops(pi, 0);
		batched[r] = time_ops(pi, 1);
		perfinject__free(pi);
		if (single[r] < 0 || batched[r] < 0) {
			printf("%-28s  (an operation failed)\n", c->label);
			listen_stop();
			return;
		}
	}
	listen_stop();
	qsort(null, rounds, sizeof(double), cmp_double);
	qsort(single, rounds, sizeof(double), cmp_double);
	qsort(batched, rounds, sizeof(double), cmp_double);
	printf("%-28s  %9.0f  %7.2f  %9.0f  %7.2f\n", c->label,
	       single[rounds / 2], single[rounds / 2] / null[rounds / 2],
	       batched[rounds / 2], batched[rounds / 2] / null[rounds / 2]);
}

int main(int argc, char **argv)
{
	static const struct config configs[] = {
		{ "registry only", 0, 0 },
		{ "kernel, nobody listening", PERFINJECT_BACKEND_KERNEL, 0 },
		{ "kernel, one event listening", PERFINJECT_BACKEND_KERNEL, 1 },
		{ "perf-map file", PERFINJECT_BACKEND_PERFMAP, 0 },
		{ "jitdump file", PERFINJECT_BACKEND_JITDUMP, 0 },
	};
	char dir[] = "/tmp/perfinject-bench.XXXXXX";
	size_t i;
	int opt;

	while ((opt = getopt(argc, argv, "n:b:r:")) != -1) {
		switch (opt) {
		case 'n': nr_ops = atoi(optarg); break;
		case 'b': batch = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-n OPS] [-b BATCH] [-r ROUNDS]\n",
				argv[0]);
			return 2;
		}
	}
	if (nr_ops < 1 || batch < 1 || rounds < 1 || rounds > 64) {
		fprintf(stderr, "bench: bad -n, -b or -r\n");
		return 2;
	}
	ops = calloc(2 * nr_ops, sizeof(*ops));
	names = calloc(nr_ops, sizeof(*names));
	code = mmap(NULL, 64 * (size_t)nr_ops, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ops || !names || code == MAP_FAILED || !mkdtemp(dir)) {
		perror("bench");
		return 1;
	}
	memset(code, 0xc3, 64 * (size_t)nr_ops);
	for (i = 0; i < (size_t)nr_ops; i++) {
		snprintf(names[i], sizeof(names[i]), "bench.fn%zu(I)V", i);
		ops[i] = (struct perfinject_code_op){
			.op = PERFINJECT_OP_LOAD, .addr = (uintptr_t)code + 64 * i,
			.len = 64, .code_index = i + 1, .name = names[i],
		};
	}

	printf("%d loads then %d unloads, median of %d rounds; batches of %d\n",
	       nr_ops, nr_ops, rounds, batch);
	printf("%-28s  %9s  %7s  %9s  %7s\n", "", "ns/op", "x null", "batch ns",
	       "x null");
	for (i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
		run(&configs[i], dir);
	printf("x null: the cost of one operation over that of getppid(2) in the same round\n");

	printf("\nPR_PERF_JIT_CODE alone, %d LOAD entries, median of %d rounds\n",
	       nr_ops, rounds);
	printf("%-28s  %9s  %7s  %9s  %7s\n", "", "1/call ns", "x null",
	       "64/call ns", "x null");
	if (prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 0UL, 0UL) < 0) {
		printf("(the kernel has no PR_PERF_JIT_CODE)\n");
	} else {
		run_floor();
		/* The kernel turns its key off a second after the last event. */
		sleep(2);
		run_raw("no jit_code event", RAW_NONE);
		run_raw("an event on another task", RAW_OTHER);
		run_raw("one event listening", RAW_SELF);
	}
	printf("64/call: per entry, in calls of 64 entries\n");

	/* The file backends leave their files, as perf needs them: not here. */
	for (i = 0; i < 2; i++) {
		char path[sizeof(dir) + 32];

		snprintf(path, sizeof(path), i ? "%s/jit-%d.dump" : "%s/perf-%d.map",
			 dir, getpid());
		unlink(path);
	}
	rmdir(dir);
	return 0;
}
