// SPDX-License-Identifier: GPL-2.0
/*
 * Concurrency stress for PERF_RECORD_JIT_CODE.
 *
 * Sixteen threads call PR_PERF_JIT_CODE while other threads open, enable,
 * disable and close events (per-task, inherited, CPU-wide), fork children
 * that call it and exit, and fork children that exec this program, call
 * it and exit. One listener, an inherited event on each CPU as perf
 * record opens them, is drained all along: the records it received plus
 * the ones the kernel reported lost must equal the entries the callers
 * had consumed, children included. At the end, with every event closed,
 * the kernel must hold no more perf_event objects than before.
 *
 * JIT_STRESS_SECONDS sets the length (default 10).
 */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/prctl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"

#include "jit_code.h"

#define INJECTORS	16
#define CHURNERS	2
#define MAX_CPUS	64
#define LISTEN_PAGES	32
#define CHURN_PAGES	2
#define CHILD_ENV	"JIT_STRESS_CHILD"

struct stress {
	long				page;
	pid_t				pid;
	bool				stop;	/* atomic */

	struct ev			listen[MAX_CPUS];
	int				nr_cpus;
	__u64				delivered, lost;
	char				why[256];

	/* entries consumed, by the threads and the children */
	__u64				consumed;
	unsigned long			calls;
	unsigned long			opened, closed, toggled;
	unsigned long			forks, execs;
	int				count_pipe[2];	/* children's counts */
	__u64				child_consumed;
};

/* Add up the counts the children sent. */
static void children_read(struct stress *s)
{
	__u64 c;

	while (read(s->count_pipe[0], &c, sizeof(c)) == sizeof(c))
		s->child_consumed += c;
}

/* Count what one listener holds; 0, or -1 with s->why set. */
static int listen_drain(struct stress *s, struct ev *ev)
{
	__u64 head = __atomic_load_n(&ev->page->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = ev->page->data_tail;

	while (tail != head) {
		struct perf_event_header hdr;
		__u64 lost[2];

		rb_copy(ev, tail, &hdr, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size % 8 ||
		    hdr.size > head - tail) {
			snprintf(s->why, sizeof(s->why),
				 "malformed record header: type %u size %u",
				 hdr.type, hdr.size);
			return -1;
		}
		switch (hdr.type) {
		case PERF_RECORD_JIT_CODE:
			s->delivered++;
			break;
		case PERF_RECORD_LOST:
			rb_copy(ev, tail + sizeof(hdr), lost, sizeof(lost));
			s->lost += lost[1];
			break;
		case PERF_RECORD_COMM:
		case PERF_RECORD_EXIT:
		case PERF_RECORD_FORK:
			break;
		default:
			snprintf(s->why, sizeof(s->why),
				 "a record of type %u in the listener", hdr.type);
			return -1;
		}
		tail += hdr.size;
	}
	__atomic_store_n(&ev->page->data_tail, tail, __ATOMIC_RELEASE);
	return 0;
}

/* A call of 1 to 16 valid entries; the number consumed, or -1. */
static long inject(unsigned int *seed, const char *name)
{
	struct perf_jit_code_entry e[16];
	struct perf_jit_code_args a;
	unsigned int i, nr = 1 + rand_r(seed) % 16;

	memset(e, 0, sizeof(e));
	for (i = 0; i < nr; i++) {
		e[i].op = 1 + rand_r(seed) % 4;
		e[i].addr = 0x40000000ULL + (rand_r(seed) % 4096) * 64;
		e[i].len = 64;
		if (e[i].op == PERF_JIT_CODE_LOAD)
			e[i].name = (uintptr_t)name;
		if (e[i].op == PERF_JIT_CODE_MOVE)
			e[i].new_addr = e[i].addr + 0x10000000ULL;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.entries = (uintptr_t)e;
	a.nr_entries = nr;
	a.entry_size = sizeof(e[0]);
	return prctl(PR_PERF_JIT_CODE, (unsigned long)&a, 0UL, 0UL, 0UL);
}

/* A child's calls: consumed entries go up the pipe. */
static void child_calls(int fd, unsigned int seed, int calls)
{
	__u64 consumed = 0;
	long ret;

	while (calls--) {
		ret = inject(&seed, "stress_child");
		if (ret > 0)
			consumed += ret;
	}
	if (write(fd, &consumed, sizeof(consumed)) != sizeof(consumed))
		_exit(2);
	_exit(0);
}

/* This program, exec'ed by a child: make the calls and exit. */
__attribute__((constructor))
static void exec_child(void)
{
	const char *env = getenv(CHILD_ENV);
	int fd, seed;

	if (!env || sscanf(env, "%d:%d", &fd, &seed) != 2)
		return;
	child_calls(fd, seed, 64);
}

static void *injector(void *p)
{
	struct stress *s = p;
	unsigned int seed = (uintptr_t)&seed;
	unsigned long calls = 0;
	__u64 consumed = 0;
	long ret;

	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		ret = inject(&seed, "Lstress/Inject;run()V");
		calls++;
		if (ret < 0) {
			snprintf(s->why, sizeof(s->why),
				 "a valid call failed: %s", strerror(errno));
			__atomic_store_n(&s->stop, true, __ATOMIC_RELAXED);
			break;
		}
		consumed += ret;
	}
	__atomic_add_fetch(&s->consumed, consumed, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->calls, calls, __ATOMIC_RELAXED);
	return NULL;
}

/* Opens, toggles and closes events; forks and execs children. */
static void *churner(void *p)
{
	struct stress *s = p;
	struct ev evs[4];
	unsigned int seed = (uintptr_t)&seed;
	int i;

	for (i = 0; i < 4; i++)
		evs[i].fd = -1, evs[i].map = NULL;
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		unsigned int r = rand_r(&seed);
		struct perf_event_attr attr;
		pid_t pid, who = 0;
		int cpu = -1;
		char env[64];

		i = r % 4;
		switch ((r >> 4) % 8) {
		case 0:		/* a child that calls and exits */
		case 1:		/* one that execs this program first */
			pid = fork();
			if (pid == 0) {
				if ((r >> 4) % 8 == 0)
					child_calls(s->count_pipe[1], r, 64);
				snprintf(env, sizeof(env), "%d:%u",
					 s->count_pipe[1], r);
				setenv(CHILD_ENV, env, 1);
				execl("/proc/self/exe", "jit_code_stress", NULL);
				_exit(3);
			}
			if (pid > 0) {
				int status;

				waitpid(pid, &status, 0);
				if (!WIFEXITED(status) || WEXITSTATUS(status)) {
					snprintf(s->why, sizeof(s->why),
						 "a child ended with status %#x",
						 status);
					__atomic_store_n(&s->stop, true, __ATOMIC_RELAXED);
				}
				if ((r >> 4) % 8 == 0)
					s->forks++;
				else
					s->execs++;
			}
			break;
		default:
			if (evs[i].fd >= 0) {
				if ((r >> 8) % 3) {
					ioctl(evs[i].fd, (r >> 10) % 2 ?
					      PERF_EVENT_IOC_DISABLE :
					      PERF_EVENT_IOC_ENABLE, 0);
					s->toggled++;
				} else {
					ev_close(&evs[i]);
					s->closed++;
				}
				break;
			}
			attr_init(&attr, (r >> 8) % 4 != 0);
			switch ((r >> 12) % 3) {
			case 0:		/* the process, inherited, per CPU */
				attr.inherit = 1;
				cpu = (r >> 16) % s->nr_cpus;
				break;
			case 1:		/* CPU-wide */
				who = -1;
				cpu = (r >> 16) % s->nr_cpus;
				break;
			default:	/* the main thread */
				who = s->pid;
				break;
			}
			if (!ev_open(&evs[i], &attr, who, cpu,
				     (r >> 20) % 2 ? CHURN_PAGES : 0))
				s->opened++;
			break;
		}
		for (i = 0; i < 4; i++)
			if (evs[i].map)
				__atomic_store_n(&evs[i].page->data_tail,
						 __atomic_load_n(&evs[i].page->data_head,
								 __ATOMIC_ACQUIRE),
						 __ATOMIC_RELEASE);
		usleep(100);
	}
	for (i = 0; i < 4; i++)
		if (evs[i].fd >= 0) {
			ev_close(&evs[i]);
			s->closed++;
		}
	return NULL;
}

/*
 * perf_event objects in use in the kernel's slab cache, or -1 when the
 * cache is not listed alone. Shrinking the cache first (root) empties the
 * per-CPU slabs, which count their free objects as in use, and KASAN's
 * quarantine, which holds freed objects back.
 */
static long perf_event_objects(void)
{
	char line[512], name[64];
	long active = -1, n;
	FILE *fp;

	fp = fopen("/sys/kernel/slab/perf_event/shrink", "w");
	if (fp) {
		fputs("1", fp);
		fclose(fp);
	}
	fp = fopen("/proc/slabinfo", "r");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "%63s %ld", name, &n) == 2 &&
		    !strcmp(name, "perf_event"))
			active = n;
	fclose(fp);
	return active;
}

FIXTURE(stress)
{
	struct stress s;
	unsigned int seconds;
};

FIXTURE_SETUP(stress)
{
	const char *env = getenv("JIT_STRESS_SECONDS");
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	memset(&self->s, 0, sizeof(self->s));
	if (prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 0UL, 0UL) < 0)
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	self->seconds = env && *env ? strtoul(env, NULL, 0) : 10;
	self->s.page = sysconf(_SC_PAGESIZE);
	self->s.pid = getpid();
	self->s.nr_cpus = n < MAX_CPUS ? n : MAX_CPUS;
	ASSERT_EQ(0, pipe(self->s.count_pipe));
	ASSERT_EQ(0, fcntl(self->s.count_pipe[0], F_SETFL, O_NONBLOCK));
}

FIXTURE_TEARDOWN(stress)
{
}

TEST_F_TIMEOUT(stress, counts_add_up, 3600)
{
	struct stress *s = &self->s;
	pthread_t inj[INJECTORS], churn[CHURNERS];
	struct perf_event_attr attr;
	struct timespec end, now;
	long before, after = -1;
	__u64 child_consumed;
	int i, ret = 0;

	before = perf_event_objects();

	/* The listener: inherited, one event per CPU, as perf record opens. */
	for (i = 0; i < s->nr_cpus; i++) {
		attr_init(&attr, true);
		attr.inherit = 1;
		ret = ev_open(&s->listen[i], &attr, 0, i, LISTEN_PAGES);
		if (ret == -EACCES || ret == -EPERM)
			SKIP(return, "perf_event_open: %s", strerror(-ret));
		ASSERT_EQ(0, ret) TH_LOG("perf_event_open on CPU %d: %s", i,
					 strerror(-ret));
	}

	for (i = 0; i < INJECTORS; i++)
		ASSERT_EQ(0, pthread_create(&inj[i], NULL, injector, s));
	for (i = 0; i < CHURNERS; i++)
		ASSERT_EQ(0, pthread_create(&churn[i], NULL, churner, s));

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += self->seconds;
	do {
		for (i = 0; i < s->nr_cpus && !ret; i++)
			ret = listen_drain(s, &s->listen[i]);
		if (ret)
			__atomic_store_n(&s->stop, true, __ATOMIC_RELAXED);
		children_read(s);
		usleep(1000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED) && (now.tv_sec < end.tv_sec ||
			      (now.tv_sec == end.tv_sec &&
			       now.tv_nsec < end.tv_nsec)));
	__atomic_store_n(&s->stop, true, __ATOMIC_RELAXED);
	for (i = 0; i < INJECTORS; i++)
		pthread_join(inj[i], NULL);
	for (i = 0; i < CHURNERS; i++)
		pthread_join(churn[i], NULL);
	ASSERT_EQ(0, ret) TH_LOG("%s", s->why);
	ASSERT_EQ('\0', s->why[0]) TH_LOG("%s", s->why);

	/*
	 * A loss is reported by the LOST record written before the next
	 * record that fits: read each buffer, then write one record on its
	 * CPU, so that the losses of the end are reported too.
	 */
	for (i = 0; i < s->nr_cpus && !ret; i++) {
		ret = listen_drain(s, &s->listen[i]);
		if (ret || pin_to_cpu(i))
			break;
		if (emit_one("stress_last", i) != 1) {
			snprintf(s->why, sizeof(s->why), "the last call failed");
			ret = -1;
			break;
		}
		s->consumed++;
		ret = listen_drain(s, &s->listen[i]);
	}
	ASSERT_EQ(0, ret) TH_LOG("%s", s->why);
	for (i = 0; i < s->nr_cpus; i++)
		ev_close(&s->listen[i]);

	children_read(s);
	child_consumed = s->child_consumed;
	close(s->count_pipe[0]);
	close(s->count_pipe[1]);

	ksft_print_msg("%u s, %d injecting threads, %lu calls\n",
		       self->seconds, INJECTORS, s->calls);
	ksft_print_msg("entries consumed: %llu, %llu of them by children\n",
		       (unsigned long long)(s->consumed + child_consumed),
		       (unsigned long long)child_consumed);
	ksft_print_msg("children: %lu forked, %lu exec'ed\n", s->forks,
		       s->execs);
	ksft_print_msg("listener on %d CPUs: %llu records, %llu reported lost\n",
		       s->nr_cpus, (unsigned long long)s->delivered,
		       (unsigned long long)s->lost);
	ksft_print_msg("events opened %lu, closed %lu, toggled %lu times\n",
		       s->opened, s->closed, s->toggled);
	EXPECT_EQ(s->consumed + child_consumed, s->delivered + s->lost);
	EXPECT_LT(0, s->delivered);

	/* Events are freed after an RCU grace period: wait for it. */
	if (before >= 0) {
		for (i = 0; i < 100; i++) {
			after = perf_event_objects();
			if (after <= before)
				break;
			usleep(50000);
		}
		ksft_print_msg("perf_event objects: %ld before, %ld after\n",
			       before, after);
		EXPECT_LE(after, before);
	} else {
		ksft_print_msg("perf_event objects: not counted (%s)\n",
			       "no perf_event line in /proc/slabinfo");
	}
}

TEST_HARNESS_MAIN
