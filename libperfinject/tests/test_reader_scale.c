// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The registry read at the size of a real runtime while it works: a
 * child keeps 200,000 entries live, of which 8 threads replace their own
 * 1,000 as fast as they can (unload, load a new name elsewhere), and the
 * parent reads the registry from outside, 5 times. Each read must finish
 * within its time bound, hold every one of the 192,000 entries that
 * never changed, hold no entry torn or twice, and of the changing ones
 * only entries the child published.
 *
 *   test_reader_scale [SECONDS-BOUND]   (default 5)
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define NR_STABLE	192000
#define NR_THREADS	8
#define PER_THREAD	1000
#define READS		5

static struct perfinject *pi;
/* The writers with their first entries loaded, and the child's main. */
static pthread_barrier_t started;

static uint64_t stable_addr(unsigned int i)
{
	return 0x100000000ULL + (uint64_t)i * 64;
}

/* Thread @t's slot @s, generation @g: two addresses it alternates. */
static uint64_t churn_addr(unsigned int t, unsigned int s, unsigned int g)
{
	return 0x800000000ULL + ((uint64_t)t << 24) + ((uint64_t)s << 6) +
	       (g & 1) * 32;
}

static void *churn(void *arg)
{
	unsigned int t = (uintptr_t)arg, s, g[PER_THREAD] = { 0 };
	char name[64];

	for (s = 0; s < PER_THREAD; s++) {
		snprintf(name, sizeof(name), "c%u_%u_%u", t, s, 0);
		if (perfinject__load(pi, name, churn_addr(t, s, 0), 16, 0))
			_exit(T_FAIL);
	}
	pthread_barrier_wait(&started);
	for (s = 0;; s = (s + 1) % PER_THREAD) {
		if (perfinject__unload(pi, churn_addr(t, s, g[s])))
			_exit(T_FAIL);
		g[s]++;
		snprintf(name, sizeof(name), "c%u_%u_%u", t, s, g[s]);
		if (perfinject__load(pi, name, churn_addr(t, s, g[s]), 16, 0))
			_exit(T_FAIL);
	}
	return NULL;
}

static void child(int ready_fd)
{
	static struct perfinject_code_op ops[1024];
	static char names[1024][24];
	pthread_t tid[NR_THREADS];
	unsigned int i, j;
	char byte = 1;

	PERFINJECT_OPTS(opts, .flags = PERFINJECT_F_REGISTRY_ONLY);
	pi = perfinject__new(&opts);
	if (!pi)
		_exit(T_FAIL);
	for (i = 0; i < NR_STABLE; i += 1024) {
		for (j = 0; j < 1024 && i + j < NR_STABLE; j++) {
			snprintf(names[j], sizeof(names[j]), "stable_%u", i + j);
			ops[j] = (struct perfinject_code_op){
				.op = PERFINJECT_OP_LOAD,
				.addr = stable_addr(i + j), .len = 48,
				.code_index = i + j + 1, .name = names[j] };
		}
		if (perfinject__batch(pi, ops, j) != (int)j)
			_exit(T_FAIL);
	}
	if (pthread_barrier_init(&started, NULL, NR_THREADS + 1))
		_exit(T_FAIL);
	for (i = 0; i < NR_THREADS; i++)
		if (pthread_create(&tid[i], NULL, churn, (void *)(uintptr_t)i))
			_exit(T_FAIL);
	pthread_barrier_wait(&started);
	if (write(ready_fd, &byte, 1) != 1)
		_exit(T_FAIL);
	for (;;)
		pause();
}

struct check {
	unsigned char	*stable;	/* seen per stable entry */
	unsigned int	churned;
	unsigned int	bad;
	unsigned int	dup;
	unsigned char	*seen_churn;
};

static int check_cb(const struct perfinject_code *c, void *ctx)
{
	struct check *k = ctx;
	unsigned int i, t, s, g;

	if (sscanf(c->name, "stable_%u", &i) == 1) {
		if (i >= NR_STABLE || c->addr != stable_addr(i) ||
		    c->len != 48 || c->code_index != i + 1) {
			if (!k->bad++)
				fprintf(stderr, "torn: %#" PRIx64 " %s\n",
					c->addr, c->name);
			return 0;
		}
		if (k->stable[i]++)
			k->dup++;
		return 0;
	}
	if (sscanf(c->name, "c%u_%u_%u", &t, &s, &g) == 3 &&
	    t < NR_THREADS && s < PER_THREAD &&
	    c->addr == churn_addr(t, s, g) && c->len == 16 &&
	    !c->code_index) {
		if (k->seen_churn[t * PER_THREAD + s]++)
			k->dup++;
		k->churned++;
		return 0;
	}
	if (!k->bad++)
		fprintf(stderr, "torn: %#" PRIx64 " %s\n", c->addr, c->name);
	return 0;
}

int main(int argc, char **argv)
{
	double bound = argc > 1 ? atof(argv[1]) : 5, secs, worst = 0;
	uint64_t addr = 0, ops0, ops1;
	struct check k = { 0 };
	struct timespec t0, t1;
	int status, ret, r;
	unsigned int i, missing;
	pid_t pid;

	pid = t_start_child(child);
	if (pid < 0)
		return T_FAIL;
	k.stable = calloc(NR_STABLE, 1);
	k.seen_churn = calloc(NR_THREADS * PER_THREAD, 1);
	if (!k.stable || !k.seen_churn)
		return T_FAIL;
	ret = perfinject_registry__find_pid(pid, &addr);
	CHECK(!ret, "find_pid: %d", ret);

	/* The writers' rate, from the descriptor's count of changes. */
	{
		struct perfinject_registry_descriptor d;
		struct iovec l = { &d, sizeof(d) };
		struct iovec rm = { (void *)(uintptr_t)addr, sizeof(d) };

		process_vm_readv(pid, &l, 1, &rm, 1, 0);
		ops0 = d.changes;
		usleep(200000);
		process_vm_readv(pid, &l, 1, &rm, 1, 0);
		ops1 = d.changes;
	}

	for (r = 0; r < READS && !t_failures; r++) {
		memset(k.stable, 0, NR_STABLE);
		memset(k.seen_churn, 0, NR_THREADS * PER_THREAD);
		k.churned = k.bad = k.dup = 0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ret = perfinject_registry__read_pid(pid, addr, check_cb, &k);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		secs = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (secs > worst)
			worst = secs;
		for (i = 0, missing = 0; i < NR_STABLE; i++)
			missing += !k.stable[i];
		fprintf(stderr, "read %d: %d entries in %.3f s: %u stable "
			"missing, %u of %u changing ones\n", r, ret, secs,
			missing, k.churned, NR_THREADS * PER_THREAD);
		CHECK(ret >= NR_STABLE, "read %d: %d (%s)", r, ret,
		      ret < 0 ? strerror(-ret) : "too few");
		CHECK(secs <= bound, "read %d took %.3f s, bound %.1f s", r,
		      secs, bound);
		CHECK(!missing, "read %d: %u stable entries missing", r,
		      missing);
		CHECK(!k.bad && !k.dup, "read %d: %u torn, %u twice", r,
		      k.bad, k.dup);
	}
	CHECK(waitpid(pid, &status, WNOHANG) == 0, "child died: %#x", status);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	printf("200,000 entries, %d writer threads at %.0f changes/s: %d "
	       "reads, the slowest %.3f s (bound %.1f s)\n", NR_THREADS,
	       (ops1 - ops0) / 0.2, READS, worst, bound);
	CHECK(ops1 - ops0 > 1000, "the writers did not run: %" PRIu64,
	      ops1 - ops0);
	return t_done();
}
