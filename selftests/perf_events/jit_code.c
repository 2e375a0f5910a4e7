// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for PERF_RECORD_JIT_CODE: the jit_code attr bit, PR_PERF_JIT_CODE
 * and PERF_EVENT_IOC_JIT_CODE.
 *
 * Most events are software dummy events with sample_id_all set, read back
 * through their mmap()ed ring buffer.
 *
 * Both calls work like write(2). The prctl returns the number of entries
 * it consumed and the ioctl the number it wrote; either can be fewer than
 * asked for (an invalid entry, a per-call byte limit, a full buffer), and
 * the caller goes on from there. Tests of large batches loop the way
 * callers must.
 *
 * The Makefile also builds this file with -m32 as jit_code_32, which runs
 * every case again from a 32-bit process.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <linux/prctl.h>

#include "../kselftest_harness.h"

#include "jit_code.h"

/* The numbers of the ABI, which need no kernel to check. */
TEST(abi_numbers)
{
	struct perf_event_attr attr;
	__u64 flags;

	EXPECT_EQ(23, PERF_RECORD_JIT_CODE);
	EXPECT_EQ(82, PR_PERF_JIT_CODE);
	EXPECT_EQ(_IOW('$', 12, struct perf_jit_code_args),
		  PERF_EVENT_IOC_JIT_CODE);
	EXPECT_EQ(32U, _IOC_SIZE(PERF_EVENT_IOC_JIT_CODE));
	EXPECT_EQ(1, PERF_JIT_CODE_LOAD);
	EXPECT_EQ(2, PERF_JIT_CODE_UNLOAD);
	EXPECT_EQ(3, PERF_JIT_CODE_MOVE);
	EXPECT_EQ(4, PERF_JIT_CODE_FLUSH);
	EXPECT_EQ(5, PERF_JIT_CODE_DATA);
	EXPECT_EQ(24, PERF_RECORD_JIT_CODE_DATA);
	EXPECT_EQ(1, PERF_JIT_CODE_DATA_BYTES);
	EXPECT_EQ(2, PERF_JIT_CODE_DATA_LINES);
	EXPECT_EQ(3, PERF_JIT_CODE_DATA_UNWIND);
	EXPECT_EQ(1U, PERF_JIT_CODE_FLAGS_SYNTHESIZED);
	EXPECT_EQ(1024, PERF_JIT_CODE_NAME_MAX);
	EXPECT_EQ(1024, PERF_JIT_CODE_MAX_ENTRIES);
	EXPECT_EQ(32, PERF_JIT_CODE_ARGS_SIZE_VER0);
	EXPECT_EQ(48, PERF_JIT_CODE_ENTRY_SIZE_VER0);
	EXPECT_EQ(32UL, (unsigned long)sizeof(struct perf_jit_code_args));
	EXPECT_EQ(64, PERF_JIT_CODE_ENTRY_SIZE_VER1);
	EXPECT_EQ(64UL, (unsigned long)sizeof(struct perf_jit_code_entry));
	EXPECT_EQ(48UL, (unsigned long)offsetof(struct perf_jit_code_entry,
						data));
	EXPECT_EQ(60UL, (unsigned long)offsetof(struct perf_jit_code_entry,
						data_size));
	EXPECT_EQ(24UL, (unsigned long)sizeof(struct perf_jit_code_line));
	EXPECT_EQ(8UL, (unsigned long)sizeof(struct perf_jit_code_lines));
	EXPECT_EQ(16UL, (unsigned long)sizeof(struct perf_jit_code_unwind));
	EXPECT_EQ(24UL, (unsigned long)offsetof(struct perf_jit_code_args, pid));
	EXPECT_EQ(40UL, (unsigned long)offsetof(struct perf_jit_code_entry,
						name));

	/* jit_code is bit 40 of the flags word after read_format. */
	memset(&attr, 0, sizeof(attr));
	attr.jit_code = 1;
	memcpy(&flags, (char *)&attr + offsetof(struct perf_event_attr,
						read_format) + 8,
	       sizeof(flags));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	EXPECT_EQ(1ULL << 40, flags);
#else
	EXPECT_EQ(1ULL << 23, flags);
#endif
}

/*
 * The prctl, the attribute and the ioctl agree on whether the kernel has
 * the interface, so a profiler may probe with any of them. Without it
 * (CONFIG_PERF_JIT_CODE=n, or a kernel that predates it) each one fails
 * as Documentation/userspace-api/perf_jit_code.rst says, and perf events
 * without the attribute open as before.
 */
TEST(probes_agree)
{
	struct perf_event_attr attr;
	struct ev jit, plain;
	int ret, prctl_errno;
	long mask;

	attr_init(&attr, false);
	ret = ev_open(&plain, &attr, 0, -1, 0);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	mask = prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 0UL, 0UL);
	prctl_errno = errno;
	attr_init(&attr, true);
	ret = ev_open(&jit, &attr, 0, -1, 0);
	if (mask >= 0) {
		EXPECT_EQ(JIT_OPS_MASK, mask);
		ASSERT_EQ(0, ret);
		EXPECT_EQ(JIT_OPS_MASK,
			  ioctl(jit.fd, PERF_EVENT_IOC_JIT_CODE, NULL));
		/* the probe answers on any event */
		EXPECT_EQ(JIT_OPS_MASK,
			  ioctl(plain.fd, PERF_EVENT_IOC_JIT_CODE, NULL));
		ev_close(&jit);
	} else {
		TH_LOG("kernel without PR_PERF_JIT_CODE");
		EXPECT_EQ(EINVAL, prctl_errno);
		EXPECT_EQ(-EINVAL, ret);
		/* the ioctl's number is as unknown as any other */
		EXPECT_EQ(-1, ioctl(plain.fd, PERF_EVENT_IOC_JIT_CODE, NULL));
		EXPECT_EQ(ENOTTY, errno);
	}
	ev_close(&plain);
}

/* Most tests need no more than the feature and the CPUs they may use. */
FIXTURE(jit_code)
{
	int cpus[2];
	int nr_cpus;
};

FIXTURE_SETUP(jit_code)
{
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	self->nr_cpus = allowed_cpus(self->cpus, 2);
	ASSERT_GE(self->nr_cpus, 1);
}

FIXTURE_TEARDOWN(jit_code)
{
}

TEST_F(jit_code, prctl_probe)
{
	struct perf_jit_code_entry e[3];
	struct perf_jit_code_args args;

	ASSERT_EQ(JIT_OPS_MASK, prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 0UL, 0UL));

	/* arg3 to arg5 must be zero, for the probe too */
	EXPECT_EQ(-1, prctl(PR_PERF_JIT_CODE, 0UL, 1UL, 0UL, 0UL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 1UL, 0UL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 0UL, 1UL));
	EXPECT_EQ(EINVAL, errno);

	/*
	 * Valid input is consumed whether or not anything listens (see the
	 * shortcut tests for what tells the two apart).
	 */
	entries_mixed(e, 1, "jit_probe");
	args_init(&args, e, 3);
	EXPECT_EQ(3, jit_prctl(&args));
}

TEST_F(jit_code, prctl_extra_args)
{
	struct perf_jit_code_entry e[3];
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct records recs = {};
	unsigned long a = (unsigned long)&args;
	struct ev ev;
	int ret;

	attr_init(&attr, true);
	ret = ev_open(&ev, &attr, 0, -1, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	entries_mixed(e, 2, "jit_extra_args");
	args_init(&args, e, 3);
	EXPECT_EQ(-1, prctl(PR_PERF_JIT_CODE, a, 1UL, 0UL, 0UL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, prctl(PR_PERF_JIT_CODE, a, 0UL, 1UL, 0UL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, prctl(PR_PERF_JIT_CODE, a, 0UL, 0UL, 1UL));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, ev_drain(&ev, &recs));
	EXPECT_EQ(0U, recs.nr);

	ASSERT_EQ(3, prctl(PR_PERF_JIT_CODE, a, 0UL, 0UL, 0UL));
	ASSERT_EQ(0, ev_drain(&ev, &recs));
	EXPECT_EQ(3U, records_count(&recs, PERF_RECORD_JIT_CODE));
	records_free(&recs);
	ev_close(&ev);
}

TEST_F(jit_code, ioctl_probe)
{
	struct perf_jit_code_entry e[3];
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct records recs = {};
	struct ev jit, plain;
	int ret;

	attr_init(&attr, true);
	ret = ev_open(&jit, &attr, 0, -1, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
	attr_init(&attr, false);
	ASSERT_EQ(0, ev_open(&plain, &attr, 0, -1, DATA_PAGES));

	EXPECT_EQ(JIT_OPS_MASK, ioctl(jit.fd, PERF_EVENT_IOC_JIT_CODE, NULL));

	/* The ioctl is for events that asked for JIT records only. */
	entries_mixed(e, 3, "jit_ioctl_probe");
	args_init(&args, e, 3);
	EXPECT_EQ(-EINVAL, jit_ioctl(plain.fd, &args));
	ASSERT_EQ(0, ev_drain(&plain, &recs));
	EXPECT_EQ(0U, recs.nr);
	ASSERT_EQ(0, ev_drain(&jit, &recs));
	EXPECT_EQ(0U, recs.nr);

	EXPECT_EQ(3, jit_ioctl(jit.fd, &args));
	ASSERT_EQ(0, ev_drain(&jit, &recs));
	EXPECT_EQ(3U, records_count(&recs, PERF_RECORD_JIT_CODE));
	records_free(&recs);
	ev_close(&plain);
	ev_close(&jit);
}

enum ev_cpu {
	ANY_CPU,	/* cpu = -1 */
	THIS_CPU,	/* the CPU the test is pinned to */
	OTHER_CPU,	/* a CPU the test does not run on */
};

/*
 * What task_event emits, from the thread the event monitors: a COMM
 * record to order against, then two calls.
 */
struct task_emit {
	pthread_barrier_t		barrier;
	pthread_t			thread;
	pid_t				tid;
	struct perf_jit_code_entry	e[4];
	int				ret[3];
};

static void task_emit(struct task_emit *t)
{
	struct perf_jit_code_args args;

	t->ret[0] = prctl(PR_SET_NAME, "jit_code_test") ? -errno : 0;
	args_init(&args, t->e, 3);
	t->ret[1] = jit_prctl(&args);
	args_init(&args, &t->e[3], 1);
	t->ret[2] = jit_prctl(&args);
}

static void *task_emit_thread(void *p)
{
	struct task_emit *t = p;

	t->tid = sys_gettid();
	pthread_barrier_wait(&t->barrier);	/* tid published */
	pthread_barrier_wait(&t->barrier);	/* its event is open */
	task_emit(t);
	return NULL;
}

/* An event on one thread, PR_PERF_JIT_CODE from that thread. */
FIXTURE(task_event)
{
	struct ev ev;
	struct ev listener;	/* with jit_code, when ev has not */
	int cpus[2];
	struct task_emit emit;
	bool thread;		/* emit.thread is to be released and joined */
};

FIXTURE_VARIANT(task_event)
{
	bool		jit_code;
	bool		by_tid;		/* on a thread that is not the leader */
	enum ev_cpu	cpu;
	bool		delivered;
};

FIXTURE_VARIANT_ADD(task_event, self)
{
	.jit_code = true,
	.cpu = ANY_CPU,
	.delivered = true,
};

FIXTURE_VARIANT_ADD(task_event, by_tid)
{
	.jit_code = true,
	.by_tid = true,
	.cpu = ANY_CPU,
	.delivered = true,
};

FIXTURE_VARIANT_ADD(task_event, this_cpu)
{
	.jit_code = true,
	.cpu = THIS_CPU,
	.delivered = true,
};

FIXTURE_VARIANT_ADD(task_event, other_cpu)
{
	.jit_code = true,
	.cpu = OTHER_CPU,
	.delivered = false,
};

FIXTURE_VARIANT_ADD(task_event, no_attr_bit)
{
	.jit_code = false,
	.cpu = ANY_CPU,
	.delivered = false,
};

FIXTURE_SETUP(task_event)
{
	struct perf_event_attr attr;
	int cpu = -1, ret;

	self->ev.fd = -1;
	self->listener.fd = -1;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	ret = allowed_cpus(self->cpus, 2);
	ASSERT_GE(ret, 1);
	if (variant->cpu == OTHER_CPU && ret < 2)
		SKIP(return, "needs two CPUs");
	/* Pinned, the thread too: times are compared across records. */
	ASSERT_EQ(0, pin_to_cpu(self->cpus[0]));
	if (variant->cpu != ANY_CPU)
		cpu = self->cpus[variant->cpu == OTHER_CPU];

	entries_mixed(self->emit.e, 10, "jit_task_event");
	entry_load(&self->emit.e[3], CODE_BASE + 0x1000, 0x20, 11,
		   "jit_single");
	self->emit.tid = sys_gettid();
	if (variant->by_tid) {
		ASSERT_EQ(0, pthread_barrier_init(&self->emit.barrier, NULL,
						  2));
		ASSERT_EQ(0, pthread_create(&self->emit.thread, NULL,
					    task_emit_thread, &self->emit));
		self->thread = true;
		pthread_barrier_wait(&self->emit.barrier);
		ASSERT_NE(getpid(), self->emit.tid);
	}

	attr_init(&attr, variant->jit_code);
	attr.comm = 1;
	ret = ev_open(&self->ev, &attr, variant->by_tid ? self->emit.tid : 0,
		      cpu, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	/*
	 * Without the bit, a second event that has it makes the kernel emit
	 * the records: the first must still get none of them.
	 */
	if (!variant->jit_code) {
		attr_init(&attr, true);
		ASSERT_EQ(0, ev_open(&self->listener, &attr, 0, -1, DATA_PAGES));
	}
}

FIXTURE_TEARDOWN(task_event)
{
	if (self->thread) {
		pthread_barrier_wait(&self->emit.barrier);
		pthread_join(self->emit.thread, NULL);
	}
	ev_close(&self->ev);
	if (self->listener.fd >= 0)
		ev_close(&self->listener);
}

TEST_F(task_event, delivery)
{
	const struct perf_event_header *jit[5];
	struct perf_jit_code_args args;
	struct perf_jit_code_entry *e = self->emit.e;
	struct records recs = {};
	pid_t pid = getpid(), tid = self->emit.tid;
	unsigned int i, comm;
	__u64 last_time;

	if (self->thread) {
		pthread_barrier_wait(&self->emit.barrier);
		ASSERT_EQ(0, pthread_join(self->emit.thread, NULL));
		self->thread = false;
		/* The leader's records are not the thread's. */
		ASSERT_EQ(1, emit_one("jit_leader", 12));
	} else {
		task_emit(&self->emit);
	}
	ASSERT_EQ(0, self->emit.ret[0]);
	ASSERT_EQ(3, self->emit.ret[1]);
	ASSERT_EQ(1, self->emit.ret[2]);
	ASSERT_EQ(0, ev_drain(&self->ev, &recs));

	comm = variant->cpu == OTHER_CPU ? 0 : 1;
	ASSERT_EQ(comm, records_count(&recs, PERF_RECORD_COMM));

	if (!variant->delivered) {
		EXPECT_EQ(comm, recs.nr);
		EXPECT_EQ(0U, jit_select(&recs, ANY_PID, jit, 5));
		if (self->listener.fd >= 0) {
			/* The records were written, to the event that asked. */
			records_free(&recs);
			ASSERT_EQ(0, ev_drain(&self->listener, &recs));
			ASSERT_EQ(4U, jit_select(&recs, ANY_PID, jit, 5));
			for (i = 0; i < 4; i++)
				expect_jit(_metadata, jit[i], &e[i], pid, pid, 0);
		}
		if (variant->cpu != OTHER_CPU)
			goto out;

		/* The same event does see the records on its own CPU. */
		records_free(&recs);
		ASSERT_EQ(0, pin_to_cpu(self->cpus[1]));
		args_init(&args, &e[3], 1);
		ASSERT_EQ(1, jit_prctl(&args));
		ASSERT_EQ(0, ev_drain(&self->ev, &recs));
		ASSERT_EQ(1U, jit_select(&recs, ANY_PID, jit, 5));
		expect_jit(_metadata, jit[0], &e[3], pid, pid, 0);
		EXPECT_EQ((__u32)self->cpus[1], rec_sample_id(jit[0])->cpu);
		goto out;
	}

	/* The thread has exited: its event got the EXIT record (attr.comm). */
	ASSERT_EQ(variant->by_tid ? 6U : 5U, recs.nr);
	if (variant->by_tid)
		ASSERT_EQ((__u32)PERF_RECORD_EXIT, recs.rec[5]->type);
	ASSERT_EQ((__u32)PERF_RECORD_COMM, recs.rec[0]->type);
	ASSERT_EQ(4U, jit_select(&recs, ANY_PID, jit, 5));
	last_time = rec_time(recs.rec[0]);
	for (i = 0; i < 4; i++) {
		const struct sample_id *sid = rec_sample_id(jit[i]);

		/* In emission order, right after the COMM record. */
		EXPECT_TRUE(recs.rec[i + 1] == jit[i]);
		expect_jit(_metadata, jit[i], &e[i], pid, tid, 0);
		EXPECT_EQ((__u32)pid, sid->pid);
		EXPECT_EQ((__u32)tid, sid->tid);
		EXPECT_EQ(self->ev.id, sid->id);
		if (variant->cpu == THIS_CPU)
			EXPECT_EQ((__u32)self->cpus[0], sid->cpu);
		EXPECT_LE(last_time, sid->time);
		last_time = sid->time;
	}
out:
	records_free(&recs);
}

struct thread_arg {
	pthread_barrier_t	barrier;
	pid_t			tid;
	int			ret;
};

static void *emit_thread(void *p)
{
	struct thread_arg *arg = p;

	arg->tid = sys_gettid();
	pthread_barrier_wait(&arg->barrier);	/* tid published */
	pthread_barrier_wait(&arg->barrier);	/* its event is open */
	arg->ret = emit_one("jit_from_thread", 1);
	return NULL;
}

/* A thread's records go to its own events, with its tid. */
TEST_F(jit_code, thread)
{
	const struct perf_event_header *jit[2];
	struct perf_jit_code_entry e;
	struct perf_event_attr attr;
	struct thread_arg arg = {};
	struct records recs = {};
	pid_t pid = getpid();
	pid_t tid = sys_gettid();
	struct ev main_ev, thr_ev;
	pthread_t thread;
	int ret;

	attr_init(&attr, true);
	ret = ev_open(&main_ev, &attr, 0, -1, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	ASSERT_EQ(0, pthread_barrier_init(&arg.barrier, NULL, 2));
	ASSERT_EQ(0, pthread_create(&thread, NULL, emit_thread, &arg));
	pthread_barrier_wait(&arg.barrier);
	ret = ev_open(&thr_ev, &attr, arg.tid, -1, DATA_PAGES);
	pthread_barrier_wait(&arg.barrier);
	ASSERT_EQ(0, pthread_join(thread, NULL));
	ASSERT_EQ(0, ret);
	ASSERT_EQ(1, arg.ret);
	ASSERT_NE(tid, arg.tid);
	ASSERT_EQ(1, emit_one("jit_from_main", 2));

	ASSERT_EQ(0, ev_drain(&thr_ev, &recs));
	ASSERT_EQ(1U, jit_select(&recs, ANY_PID, jit, 2));
	entry_load(&e, CODE_BASE + 0x100, 0x100, 1, "jit_from_thread");
	expect_jit(_metadata, jit[0], &e, pid, arg.tid, 0);
	EXPECT_EQ((__u32)arg.tid, rec_sample_id(jit[0])->tid);
	records_free(&recs);

	ASSERT_EQ(0, ev_drain(&main_ev, &recs));
	ASSERT_EQ(1U, jit_select(&recs, ANY_PID, jit, 2));
	entry_load(&e, CODE_BASE + 0x200, 0x100, 2, "jit_from_main");
	expect_jit(_metadata, jit[0], &e, pid, tid, 0);
	records_free(&recs);

	pthread_barrier_destroy(&arg.barrier);
	ev_close(&thr_ev);
	ev_close(&main_ev);
}

/*
 * A forked child's records reach the inherited copy of an inherit=1 event,
 * which writes to the parent's buffer. The kernel refuses to mmap() an
 * inherited event with cpu == -1, so parent and child share one CPU.
 */
TEST_F(jit_code, inherited_event)
{
	const struct perf_event_header *jit[3];
	struct perf_jit_code_entry e;
	struct perf_event_attr attr;
	struct records recs = {};
	pid_t pid = getpid(), child;
	int cpu = self->cpus[0];
	struct ev inh, own;
	int ret;

	ASSERT_EQ(0, pin_to_cpu(cpu));

	attr_init(&attr, true);
	attr.inherit = 1;
	ret = ev_open(&inh, &attr, 0, cpu, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
	attr.inherit = 0;
	ASSERT_EQ(0, ev_open(&own, &attr, 0, cpu, DATA_PAGES));

	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0)
		_exit(emit_one("jit_child", 1) == 1 ? 0 : 1);
	ASSERT_EQ(0, wait_exit(child));
	ASSERT_EQ(1, emit_one("jit_parent", 2));

	ASSERT_EQ(0, ev_drain(&inh, &recs));
	ASSERT_EQ(2U, jit_select(&recs, ANY_PID, jit, 3));
	entry_load(&e, CODE_BASE + 0x100, 0x100, 1, "jit_child");
	expect_jit(_metadata, jit[0], &e, child, child, 0);
	EXPECT_EQ((__u32)child, rec_sample_id(jit[0])->pid);
	EXPECT_EQ((__u32)child, rec_sample_id(jit[0])->tid);
	EXPECT_EQ(inh.id, rec_sample_id(jit[0])->id);
	EXPECT_EQ((__u32)cpu, rec_sample_id(jit[0])->cpu);
	entry_load(&e, CODE_BASE + 0x200, 0x100, 2, "jit_parent");
	expect_jit(_metadata, jit[1], &e, pid, pid, 0);
	records_free(&recs);

	/* Not inherited: the child was never monitored by it. */
	ASSERT_EQ(0, ev_drain(&own, &recs));
	ASSERT_EQ(1U, jit_select(&recs, ANY_PID, jit, 3));
	expect_jit(_metadata, jit[0], &e, pid, pid, 0);
	records_free(&recs);

	ev_close(&own);
	ev_close(&inh);
}

/* A CPU-wide event sees the records of whoever runs on its CPU. */
TEST_F(jit_code, cpu_wide_event)
{
	const struct perf_event_header *jit[2];
	struct perf_jit_code_entry e;
	struct records recs = {};
	int cpu = self->cpus[0];
	pid_t pid = getpid();
	struct ev ev;
	int ret;

	ASSERT_EQ(0, pin_to_cpu(cpu));
	ret = open_cpu_wide(&ev, cpu);
	if (perf_unavailable(ret))
		SKIP(return, "CPU-wide perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	ASSERT_EQ(1, emit_one("jit_cpu_wide", 1));
	ASSERT_EQ(0, ev_drain(&ev, &recs));
	ASSERT_EQ(1U, jit_select(&recs, pid, jit, 2));
	entry_load(&e, CODE_BASE + 0x100, 0x100, 1, "jit_cpu_wide");
	expect_jit(_metadata, jit[0], &e, pid, pid, 0);
	EXPECT_EQ((__u32)pid, rec_sample_id(jit[0])->tid);
	EXPECT_EQ(ev.id, rec_sample_id(jit[0])->id);
	EXPECT_EQ((__u32)cpu, rec_sample_id(jit[0])->cpu);
	records_free(&recs);
	ev_close(&ev);
}

TEST_F(jit_code, cpu_wide_event_other_cpu)
{
	const struct perf_event_header *jit[2];
	struct perf_jit_code_entry e;
	struct records recs = {};
	int *cpus = self->cpus;
	pid_t pid = getpid();
	struct ev ev;
	int ret;

	if (self->nr_cpus < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pin_to_cpu(cpus[0]));
	ret = open_cpu_wide(&ev, cpus[1]);
	if (perf_unavailable(ret))
		SKIP(return, "CPU-wide perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	ASSERT_EQ(1, emit_one("jit_elsewhere", 1));
	ASSERT_EQ(0, ev_drain(&ev, &recs));
	EXPECT_EQ(0U, jit_select(&recs, pid, jit, 2));
	records_free(&recs);

	/* Once the task runs there, the event sees it. */
	ASSERT_EQ(0, pin_to_cpu(cpus[1]));
	ASSERT_EQ(1, emit_one("jit_here", 2));
	ASSERT_EQ(0, ev_drain(&ev, &recs));
	ASSERT_EQ(1U, jit_select(&recs, pid, jit, 2));
	entry_load(&e, CODE_BASE + 0x200, 0x100, 2, "jit_here");
	expect_jit(_metadata, jit[0], &e, pid, pid, 0);
	EXPECT_EQ((__u32)cpus[1], rec_sample_id(jit[0])->cpu);
	records_free(&recs);
	ev_close(&ev);
}

/* An event on another process sees that process's records, not ours. */
TEST_F(jit_code, other_task_event)
{
	const struct perf_event_header *jit[3];
	struct perf_jit_code_entry e;
	struct perf_event_attr attr;
	struct records recs = {};
	pid_t pid = getpid(), child;
	struct ev theirs, ours;
	int go[2], ret;
	char c;

	ASSERT_EQ(0, pipe(go));
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(emit_one("jit_theirs", 1) == 1 ? 0 : 1);
	}
	close(go[0]);

	attr_init(&attr, true);
	ret = ev_open(&theirs, &attr, child, -1, DATA_PAGES);
	if (perf_unavailable(ret)) {
		close(go[1]);
		wait_exit(child);
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	}
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, ev_open(&ours, &attr, 0, -1, DATA_PAGES));

	ASSERT_EQ(1, emit_one("jit_ours", 2));
	ASSERT_EQ(0, ev_drain(&theirs, &recs));
	EXPECT_EQ(0U, jit_select(&recs, ANY_PID, jit, 3));

	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	ASSERT_EQ(0, wait_exit(child));

	ASSERT_EQ(0, ev_drain(&theirs, &recs));
	ASSERT_EQ(1U, jit_select(&recs, ANY_PID, jit, 3));
	entry_load(&e, CODE_BASE + 0x100, 0x100, 1, "jit_theirs");
	expect_jit(_metadata, jit[0], &e, child, child, 0);
	records_free(&recs);

	ASSERT_EQ(0, ev_drain(&ours, &recs));
	ASSERT_EQ(1U, jit_select(&recs, ANY_PID, jit, 3));
	entry_load(&e, CODE_BASE + 0x200, 0x100, 2, "jit_ours");
	expect_jit(_metadata, jit[0], &e, pid, pid, 0);
	records_free(&recs);

	ev_close(&ours);
	ev_close(&theirs);
}

/*
 * The child of unshare(CLONE_NEWPID) is pid 1 to itself and something else
 * to us: each event gets the pid and tid as its opener's pid namespace
 * sees them. The ioctl names processes in the caller's namespace and
 * refuses one the event's namespace cannot name.
 */
TEST_F(jit_code, pid_namespace)
{
	const struct perf_event_header *jit[4];
	struct perf_jit_code_entry e, r, p;
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct records recs = {};
	int ready[2], go[2], ret;
	int pidfd, theirs, fd;
	pid_t outer = getpid();
	struct ev ev;
	pid_t child;
	char c;

	if (unshare(CLONE_NEWPID))
		SKIP(return, "unshare(CLONE_NEWPID): %s", strerror(errno));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	entry_load(&e, CODE_BASE + 0x100, 0x100, 1, "jit_in_pidns");
	entry_load(&r, CODE_BASE + 0x300, 0x100, 3, "jit_replayed_in_pidns");
	entry_load(&p, CODE_BASE + 0x500, 0x100, 5, "jit_replayed_from_out");

	attr_init(&attr, true);
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		EXPECT_EQ(1, getpid());
		ASSERT_EQ(0, ev_open(&ev, &attr, 0, -1, DATA_PAGES));
		ASSERT_EQ((ssize_t)sizeof(ev.fd),
			  write(ready[1], &ev.fd, sizeof(ev.fd)));
		ASSERT_EQ(1, read(go[0], &c, 1));

		ASSERT_EQ(1, emit_one("jit_in_pidns", 1));

		/* The ioctl names processes in the caller's namespace. */
		args_init(&args, &r, 1);
		args.pid = 1;
		EXPECT_EQ(1, jit_ioctl(ev.fd, &args));
		args.pid = outer;
		EXPECT_EQ(-ESRCH, jit_ioctl(ev.fd, &args));

		ASSERT_EQ(0, ev_drain(&ev, &recs));
		ASSERT_EQ(3U, jit_select(&recs, ANY_PID, jit, 4));
		/* The parent's replay about this process, before "go" */
		expect_jit(_metadata, jit[0], &p, 1, 1,
			   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
		EXPECT_EQ(1U, rec_sample_id(jit[0])->pid);
		EXPECT_EQ(1U, rec_sample_id(jit[0])->tid);
		expect_jit(_metadata, jit[1], &e, 1, 1, 0);
		EXPECT_EQ(1U, rec_sample_id(jit[1])->pid);
		EXPECT_EQ(1U, rec_sample_id(jit[1])->tid);
		expect_jit(_metadata, jit[2], &r, 1, 1,
			   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
		_exit(_metadata->exit_code);
	}

	close(ready[1]);
	close(go[0]);
	ASSERT_EQ((ssize_t)sizeof(fd), read(ready[0], &fd, sizeof(fd)));

	/* The child's own event, in the parent: it counts in the child's pids. */
	pidfd = syscall(__NR_pidfd_open, child, 0);
	ASSERT_LE(0, pidfd);
	theirs = syscall(__NR_pidfd_getfd, pidfd, fd, 0);
	ASSERT_LE(0, theirs);
	args_init(&args, &p, 1);
	EXPECT_EQ(-ESRCH, jit_ioctl(theirs, &args))
		TH_LOG("the event's pid namespace cannot name the caller");
	args.pid = child;
	EXPECT_EQ(1, jit_ioctl(theirs, &args));
	close(theirs);
	close(pidfd);

	ret = ev_open(&ev, &attr, child, -1, DATA_PAGES);
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, wait_exit(child));

	ASSERT_EQ(0, ev_drain(&ev, &recs));
	ASSERT_EQ(1U, jit_select(&recs, ANY_PID, jit, 4));
	expect_jit(_metadata, jit[0], &e, child, child, 0);
	EXPECT_EQ((__u32)child, rec_sample_id(jit[0])->pid);
	EXPECT_EQ((__u32)child, rec_sample_id(jit[0])->tid);
	records_free(&recs);
	ev_close(&ev);
}

/*
 * The perf clock now, from the TSC and the conversion the kernel publishes
 * in the event's mmap page (cap_user_time_zero), as perf's tsc tests do.
 * False where it cannot be read from user space.
 */
static bool perf_clock_now(const struct perf_event_mmap_page *pc, __u64 *now)
{
#ifdef __has_builtin
#if __has_builtin(__builtin_ia32_rdtsc)
	__u64 zero, cycles, mask, cyc, quot, rem;
	__u32 seq, mult, shift;
	bool ok, is_short;

	do {
		compiler_barrier();
		seq = pc->lock;
		compiler_barrier();
		ok = pc->cap_user_time_zero;
		is_short = pc->cap_user_time_short;
		zero = pc->time_zero;
		mult = pc->time_mult;
		shift = pc->time_shift;
		cycles = pc->time_cycles;
		mask = pc->time_mask;
		cyc = __builtin_ia32_rdtsc();
		compiler_barrier();
	} while (pc->lock != seq);

	if (!ok)
		return false;
	if (is_short)
		cyc = cycles + ((cyc - cycles) & mask);
	quot = cyc >> shift;
	rem = cyc & (((__u64)1 << shift) - 1);
	*now = zero + quot * mult + ((rem * mult) >> shift);
	return true;
#endif
#endif
	return false;
}

/*
 * The time in sample_id is on each event's clock. The same emission is
 * seen by an event on the variant's clock and by one on the default perf
 * clock. The first is checked against a clock read in user space before
 * and after the call: clock_gettime() for a clockid, the TSC for the perf
 * clock; both are checked against COMM records around the call.
 */
FIXTURE(clock)
{
	struct ev ev;		/* on the variant's clock */
	struct ev perf_ev;	/* on the perf clock */
};

FIXTURE_VARIANT(clock)
{
	bool		use_clockid;
	clockid_t	clockid;
};

FIXTURE_VARIANT_ADD(clock, perf_clock)
{
	.use_clockid = false,
};

FIXTURE_VARIANT_ADD(clock, monotonic)
{
	.use_clockid = true,
	.clockid = CLOCK_MONOTONIC,
};

FIXTURE_VARIANT_ADD(clock, monotonic_raw)
{
	.use_clockid = true,
	.clockid = CLOCK_MONOTONIC_RAW,
};

FIXTURE_VARIANT_ADD(clock, boottime)
{
	.use_clockid = true,
	.clockid = CLOCK_BOOTTIME,
};

FIXTURE_SETUP(clock)
{
	struct perf_event_attr attr;
	int cpus[1], ret;

	self->ev.fd = -1;
	self->perf_ev.fd = -1;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	/* The perf clock is per CPU: stay on one. */
	ASSERT_EQ(1, allowed_cpus(cpus, 1));
	ASSERT_EQ(0, pin_to_cpu(cpus[0]));
	attr_init(&attr, true);
	attr.comm = 1;
	ret = ev_open(&self->perf_ev, &attr, 0, -1, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	attr.use_clockid = variant->use_clockid;
	attr.clockid = variant->clockid;
	ASSERT_EQ(0, ev_open(&self->ev, &attr, 0, -1, DATA_PAGES));
}

FIXTURE_TEARDOWN(clock)
{
	ev_close(&self->perf_ev);
	ev_close(&self->ev);
}

/* COMM, JIT_CODE, COMM in that order, the JIT record stamped in between */
static void expect_bracketed(struct __test_metadata *_metadata,
			     struct ev *ev, const struct perf_jit_code_entry *e,
			     __u64 *jit_time)
{
	struct records recs = {};
	pid_t pid = getpid();

	ASSERT_EQ(0, ev_drain(ev, &recs));
	ASSERT_EQ(3U, recs.nr);
	ASSERT_EQ((__u32)PERF_RECORD_COMM, recs.rec[0]->type);
	ASSERT_EQ((__u32)PERF_RECORD_JIT_CODE, recs.rec[1]->type);
	ASSERT_EQ((__u32)PERF_RECORD_COMM, recs.rec[2]->type);
	expect_jit(_metadata, recs.rec[1], e, pid, pid, 0);
	*jit_time = rec_time(recs.rec[1]);
	EXPECT_LE(rec_time(recs.rec[0]), *jit_time);
	EXPECT_LE(*jit_time, rec_time(recs.rec[2]));
	records_free(&recs);
}

static bool clock_read(const struct ev *ev, bool use_clockid,
		       clockid_t clockid, __u64 *now)
{
	if (!use_clockid)
		return perf_clock_now(ev->page, now);
	*now = clock_ns(clockid);
	return true;
}

TEST_F(clock, timestamp)
{
	struct perf_jit_code_entry e;
	__u64 before, after, t;

	if (!clock_read(&self->ev, variant->use_clockid, variant->clockid,
			&before))
		SKIP(return, "no cap_user_time_zero: no perf clock in user space");

	entry_load(&e, CODE_BASE + 0x100, 0x100, 1, "jit_timed");
	ASSERT_EQ(0, prctl(PR_SET_NAME, "jit_before"));
	ASSERT_TRUE(clock_read(&self->ev, variant->use_clockid,
			       variant->clockid, &before));
	ASSERT_EQ(1, emit_one("jit_timed", 1));
	ASSERT_TRUE(clock_read(&self->ev, variant->use_clockid,
			       variant->clockid, &after));
	ASSERT_EQ(0, prctl(PR_SET_NAME, "jit_after"));

	expect_bracketed(_metadata, &self->perf_ev, &e, &t);
	expect_bracketed(_metadata, &self->ev, &e, &t);
	EXPECT_LE(before, t);
	EXPECT_GE(after, t);
}

/*
 * A full batch, every entry delivered in order with every field right,
 * also with argument and entry structs larger than the kernel's whose
 * extra bytes are zero. A full batch of short names is more than one
 * call takes, so the batch is passed the way callers must: again from
 * where a short count left off.
 */
FIXTURE(batch)
{
	struct ev ev;
};

FIXTURE_VARIANT(batch)
{
	bool		ioctl;
	__u32		nr;
	__u32		args_size;	/* 0: sizeof(args); -1: page size */
	__u32		entry_size;	/* 0: sizeof(entry); -1: page size */
};

FIXTURE_VARIANT_ADD(batch, max_entries)
{
	.nr = PERF_JIT_CODE_MAX_ENTRIES,
};

FIXTURE_VARIANT_ADD(batch, ioctl_max_entries)
{
	.ioctl = true,
	.nr = PERF_JIT_CODE_MAX_ENTRIES,
};

FIXTURE_VARIANT_ADD(batch, larger_args)
{
	.nr = 64,
	.args_size = PERF_JIT_CODE_ARGS_SIZE_VER0 + 8,
};

FIXTURE_VARIANT_ADD(batch, page_sized_args)
{
	.nr = 64,
	.args_size = -1,
};

FIXTURE_VARIANT_ADD(batch, larger_entries)
{
	.nr = 64,
	.entry_size = PERF_JIT_CODE_ENTRY_SIZE_VER0 + 16,
};

FIXTURE_VARIANT_ADD(batch, page_sized_entries)
{
	.nr = 16,
	.entry_size = -1,
};

FIXTURE_VARIANT_ADD(batch, ioctl_larger_structs)
{
	.ioctl = true,
	.nr = 64,
	.args_size = PERF_JIT_CODE_ARGS_SIZE_VER0 + 8,
	.entry_size = PERF_JIT_CODE_ENTRY_SIZE_VER0 + 16,
};

FIXTURE_SETUP(batch)
{
	struct perf_event_attr attr;
	int cpus[1], ret;

	self->ev.fd = -1;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	/* Pinned: times are compared across records. */
	ASSERT_EQ(1, allowed_cpus(cpus, 1));
	ASSERT_EQ(0, pin_to_cpu(cpus[0]));
	attr_init(&attr, true);
	ret = ev_open(&self->ev, &attr, 0, -1, BATCH_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(batch)
{
	ev_close(&self->ev);
}

static __u32 variant_size(__u32 size, __u32 dflt)
{
	if (size == (__u32)-1)
		return page_size();
	return size ? size : dflt;
}

TEST_F(batch, in_order)
{
	const struct perf_event_header **jit;
	struct perf_jit_code_args *args;
	struct perf_jit_code_entry *e;
	__u32 entry_size, flags = 0;
	struct records recs = {};
	pid_t pid = getpid();
	__u64 last_time = 0;
	unsigned char *buf;
	char (*names)[32];
	__u32 i, n;

	entry_size = variant_size(variant->entry_size, sizeof(*e));
	args = calloc(1, page_size());
	buf = calloc(variant->nr, entry_size);
	e = calloc(variant->nr, sizeof(*e));
	names = calloc(variant->nr, sizeof(*names));
	jit = calloc(variant->nr + 1, sizeof(*jit));
	ASSERT_TRUE(args && buf && e && names && jit);

	for (i = 0; i < variant->nr; i++) {
		__u64 addr = CODE_BASE + i * 0x1000ULL;
		__u64 index = 0x100000000ULL + i;

		/* Names of every length modulo 8, to exercise the padding. */
		snprintf(names[i], sizeof(names[i]), "jit_%u_%.*s", i, i % 13,
			 "abcdefghijklm");
		switch (i % 3) {
		case 0:
			entry_load(&e[i], addr, 0x10 + i, index, names[i]);
			break;
		case 1:
			entry_move(&e[i], addr, 0x10 + i,
				   MOVE_BASE + i * 0x1000ULL, index);
			break;
		default:
			entry_unload(&e[i], addr, 0x10 + i, index);
			break;
		}
		memcpy(buf + (size_t)i * entry_size, &e[i], sizeof(e[i]));
	}
	args_init(args, buf, variant->nr);
	args->size = variant_size(variant->args_size, sizeof(*args));
	args->entry_size = entry_size;

	if (variant->ioctl) {
		ASSERT_EQ((int)variant->nr, jit_call_all(self->ev.fd, args));
		flags = PERF_JIT_CODE_FLAGS_SYNTHESIZED;
	} else {
		ASSERT_EQ((int)variant->nr, jit_call_all(-1, args));
	}

	ASSERT_EQ(0, ev_drain(&self->ev, &recs));
	EXPECT_EQ(variant->nr, recs.nr);
	n = jit_select(&recs, ANY_PID, jit, variant->nr + 1);
	ASSERT_EQ(variant->nr, n);
	for (i = 0; i < n; i++) {
		const struct sample_id *sid = rec_sample_id(jit[i]);

		expect_jit(_metadata, jit[i], &e[i], pid, pid, flags);
		EXPECT_EQ(self->ev.id, sid->id);
		EXPECT_LE(last_time, sid->time);
		last_time = sid->time;
		if (_metadata->exit_code) {
			TH_LOG("first bad record: %u", i);
			break;
		}
	}
	records_free(&recs);
	free(jit);
	free(names);
	free(e);
	free(buf);
	free(args);
}

/* Names of every length up to 24 bytes, bytes outside ASCII included. */
TEST_F(jit_code, name_padding)
{
	const struct perf_event_header *jit[25];
	struct perf_jit_code_entry e[24];
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct records recs = {};
	pid_t pid = getpid();
	char names[24][25];
	unsigned int i;
	struct ev ev;
	int ret;

	attr_init(&attr, true);
	ret = ev_open(&ev, &attr, 0, -1, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	for (i = 0; i < 24; i++) {
		memset(names[i], i % 2 ? 'a' + i : 0x80 + i, i + 1);
		names[i][i + 1] = '\0';
		entry_load(&e[i], CODE_BASE + i * 0x100, 0x100, i, names[i]);
	}
	args_init(&args, e, 24);
	ASSERT_EQ(24, jit_prctl(&args));

	ASSERT_EQ(0, ev_drain(&ev, &recs));
	ASSERT_EQ(24U, jit_select(&recs, ANY_PID, jit, 25));
	for (i = 0; i < 24; i++) {
		expect_jit(_metadata, jit[i], &e[i], pid, pid, 0);
		EXPECT_EQ(JIT_RECORD_MIN + ALIGN8(i + 2), jit[i]->size);
	}
	records_free(&recs);
	ev_close(&ev);
}

/* The longest name: PERF_JIT_CODE_NAME_MAX bytes with its NUL. */
TEST_F(jit_code, name_max)
{
	const struct perf_event_header *jit[2];
	struct perf_jit_code_entry e;
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct records recs = {};
	char name[PERF_JIT_CODE_NAME_MAX];
	pid_t pid = getpid();
	struct ev ev;
	int ret;

	attr_init(&attr, true);
	ret = ev_open(&ev, &attr, 0, -1, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	entry_load(&e, CODE_BASE, 0x100, 1, name);
	args_init(&args, &e, 1);
	ASSERT_EQ(1, jit_prctl(&args));

	ASSERT_EQ(0, ev_drain(&ev, &recs));
	ASSERT_EQ(1U, jit_select(&recs, ANY_PID, jit, 2));
	expect_jit(_metadata, jit[0], &e, pid, pid, 0);
	EXPECT_EQ(JIT_RECORD_MIN + sizeof(name), jit[0]->size);
	records_free(&recs);
	ev_close(&ev);
}

/*
 * FLUSH, "nothing is left in the range", through both calls: op 4, no
 * name, new_addr 0. (Its validation is in bad_input.)
 */
TEST_F(jit_code, flush)
{
	const struct perf_event_header *jit[4];
	struct perf_jit_code_entry e[3];
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct records recs = {};
	pid_t pid = getpid();
	unsigned int i;
	struct ev ev;
	int ret;

	attr_init(&attr, true);
	ret = ev_open(&ev, &attr, 0, -1, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	entry_load(&e[0], CODE_BASE + 0x100, 0x80, 1, "jit_flushed");
	entry_flush(&e[1], CODE_BASE, 0x10000000, 2);
	/* A range that covers part of what was loaded, and nothing at all */
	entry_flush(&e[2], CODE_BASE + 0x140, 1, 3);
	args_init(&args, e, 3);
	ASSERT_EQ(3, jit_prctl(&args));
	ASSERT_EQ(0, ev_drain(&ev, &recs));
	ASSERT_EQ(3U, jit_select(&recs, ANY_PID, jit, 4));
	for (i = 0; i < 3; i++)
		expect_jit(_metadata, jit[i], &e[i], pid, pid, 0);
	EXPECT_EQ(4U, ((const struct jit_record *)jit[1])->op);
	EXPECT_EQ(JIT_RECORD_MIN, jit[1]->size);
	EXPECT_EQ(0ULL, ((const struct jit_record *)jit[1])->new_addr);
	records_free(&recs);

	ASSERT_EQ(3, jit_ioctl(ev.fd, &args));
	ASSERT_EQ(0, ev_drain(&ev, &recs));
	ASSERT_EQ(3U, jit_select(&recs, ANY_PID, jit, 4));
	for (i = 0; i < 3; i++)
		expect_jit(_metadata, jit[i], &e[i], pid, pid,
			   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
	EXPECT_EQ(JIT_RECORD_MIN, jit[2]->size);
	records_free(&recs);
	ev_close(&ev);
}

/*
 * Bad input: each variant breaks one thing in an otherwise valid call of
 * three entries (LOAD, UNLOAD and the LOAD "victim"), with an event that
 * listens to the caller, so that the prctl reads the entries (see
 * shortcut). An error in the call's arguments, or in the first entry,
 * fails the call and delivers nothing. An error in the victim ends the
 * call there: it returns the number of entries before it, which are
 * delivered, and the call that starts at the victim fails. Then the valid
 * call shows that the listening event was live.
 */
#define VICTIM	2

struct bad_ctx {
	struct perf_jit_code_args	*args;	/* at the start of region */
	void				*uargs;	/* what the call is passed */
	unsigned char			*entries;
	size_t				entries_len;
	char				*region;
	char				*guard;	/* PROT_NONE, after 3 pages */
	long				page;
};

static struct perf_jit_code_entry *bad_entry(struct bad_ctx *ctx,
					     unsigned int i)
{
	return (void *)(ctx->entries + (size_t)i * ctx->args->entry_size);
}

/* A valid call of @nr entries @entry_size apart, tails zeroed. */
static void bad_layout(struct bad_ctx *ctx, __u32 entry_size, __u32 nr)
{
	struct perf_jit_code_entry e;
	unsigned int i;

	memset(ctx->region, 0, 3 * ctx->page);
	memset(ctx->entries, 0, ctx->entries_len);
	args_init(ctx->args, ctx->entries, nr);
	ctx->args->entry_size = entry_size;
	ctx->uargs = ctx->args;
	for (i = 0; i < nr; i++) {
		if (i == 0)
			entry_load(&e, CODE_BASE, 0x100, i, "jit_first");
		else if (i == VICTIM)
			entry_load(&e, CODE_BASE + 0x1000, 0x100, i,
				   "jit_victim");
		else
			entry_unload(&e, CODE_BASE + i * 0x100ULL, 0x100, i);
		memcpy(bad_entry(ctx, i), &e, sizeof(e));
	}
}

static void bad_reset(struct bad_ctx *ctx)
{
	bad_layout(ctx, sizeof(struct perf_jit_code_entry), VICTIM + 1);
}

static struct perf_jit_code_entry *victim(struct bad_ctx *ctx)
{
	return bad_entry(ctx, VICTIM);
}

static void mut_args_size_zero(struct bad_ctx *ctx)
{
	ctx->args->size = 0;
}

static void mut_args_size_small(struct bad_ctx *ctx)
{
	ctx->args->size = PERF_JIT_CODE_ARGS_SIZE_VER0 - 1;
}

static void mut_args_size_huge(struct bad_ctx *ctx)
{
	ctx->args->size = ctx->page + 1;
}

static void mut_args_tail(struct bad_ctx *ctx)
{
	ctx->args->size = sizeof(*ctx->args) + 8;
	((char *)ctx->args)[sizeof(*ctx->args) + 7] = 1;
}

static void mut_args_tail_page(struct bad_ctx *ctx)
{
	ctx->args->size = ctx->page;
	((char *)ctx->args)[ctx->page - 1] = 1;
}

static void mut_args_unreadable(struct bad_ctx *ctx)
{
	ctx->uargs = ctx->guard;
}

/* size is readable, the rest of the struct is not */
static void mut_args_straddle(struct bad_ctx *ctx)
{
	memcpy(ctx->guard - 8, ctx->args, 8);
	ctx->uargs = ctx->guard - 8;
}

static void mut_args_flags(struct bad_ctx *ctx)
{
	ctx->args->flags = 1;
}

static void mut_args_reserved(struct bad_ctx *ctx)
{
	ctx->args->__reserved = 1;
}

static void mut_args_pid_self(struct bad_ctx *ctx)
{
	ctx->args->pid = getpid();
}

static void mut_args_pid_missing(struct bad_ctx *ctx)
{
	ctx->args->pid = INT_MAX;
}

static void mut_nr_zero(struct bad_ctx *ctx)
{
	ctx->args->nr_entries = 0;
}

static void mut_nr_too_many(struct bad_ctx *ctx)
{
	bad_layout(ctx, sizeof(struct perf_jit_code_entry),
		   PERF_JIT_CODE_MAX_ENTRIES + 1);
}

static void mut_entry_size_zero(struct bad_ctx *ctx)
{
	ctx->args->entry_size = 0;
}

static void mut_entry_size_small(struct bad_ctx *ctx)
{
	ctx->args->entry_size = PERF_JIT_CODE_ENTRY_SIZE_VER0 - 1;
}

static void mut_entry_size_huge(struct bad_ctx *ctx)
{
	bad_layout(ctx, ctx->page + 8, VICTIM + 1);
}

static void mut_entry_tail(struct bad_ctx *ctx)
{
	bad_layout(ctx, sizeof(struct perf_jit_code_entry) + 8, VICTIM + 1);
	((char *)victim(ctx))[sizeof(struct perf_jit_code_entry) + 7] = 1;
}

static void mut_entries_null(struct bad_ctx *ctx)
{
	ctx->args->entries = 0;
}

static void mut_entries_unreadable(struct bad_ctx *ctx)
{
	ctx->args->entries = (uintptr_t)ctx->guard;
}

/* The valid entries are readable, the victim is not. */
static void mut_entries_straddle(struct bad_ctx *ctx)
{
	size_t len = VICTIM * sizeof(struct perf_jit_code_entry);

	memcpy(ctx->guard - len, ctx->entries, len);
	ctx->args->entries = (uintptr_t)(ctx->guard - len);
}

static void mut_op_unknown(struct bad_ctx *ctx)
{
	victim(ctx)->op = PERF_JIT_CODE_UNKNOWN;
}

static void mut_op_past_max(struct bad_ctx *ctx)
{
	victim(ctx)->op = PERF_JIT_CODE_OP_MAX;
}

static void mut_op_huge(struct bad_ctx *ctx)
{
	victim(ctx)->op = ~0U;
}

static void mut_entry_flags(struct bad_ctx *ctx)
{
	victim(ctx)->flags = 1;
}

static void mut_entry_flags_high(struct bad_ctx *ctx)
{
	victim(ctx)->flags = 1U << 31;
}

static void mut_len_zero(struct bad_ctx *ctx)
{
	victim(ctx)->len = 0;
}

static void mut_range_wraps(struct bad_ctx *ctx)
{
	victim(ctx)->len = 0x1000 - victim(ctx)->addr;
}

static void mut_range_past_user(struct bad_ctx *ctx)
{
	victim(ctx)->len = 1ULL << 63;
}

static void mut_addr_kernel(struct bad_ctx *ctx)
{
	victim(ctx)->addr = KERNEL_ADDR;
}

static void set_move(struct perf_jit_code_entry *e, __u64 new_addr)
{
	e->op = PERF_JIT_CODE_MOVE;
	e->name = 0;
	e->new_addr = new_addr;
}

static void mut_move_target_wraps(struct bad_ctx *ctx)
{
	set_move(victim(ctx), ~0ULL - 0xfff);
	victim(ctx)->len = 0x2000;
}

static void mut_move_target_kernel(struct bad_ctx *ctx)
{
	set_move(victim(ctx), KERNEL_ADDR);
}

static void mut_move_name(struct bad_ctx *ctx)
{
	__u64 name = victim(ctx)->name;

	set_move(victim(ctx), MOVE_BASE);
	victim(ctx)->name = name;
}

static void mut_load_new_addr(struct bad_ctx *ctx)
{
	victim(ctx)->new_addr = MOVE_BASE;
}

static void mut_unload_new_addr(struct bad_ctx *ctx)
{
	victim(ctx)->op = PERF_JIT_CODE_UNLOAD;
	victim(ctx)->name = 0;
	victim(ctx)->new_addr = MOVE_BASE;
}

static void mut_unload_name(struct bad_ctx *ctx)
{
	victim(ctx)->op = PERF_JIT_CODE_UNLOAD;
}

static void mut_load_no_name(struct bad_ctx *ctx)
{
	victim(ctx)->name = 0;
}

static void mut_load_empty_name(struct bad_ctx *ctx)
{
	victim(ctx)->name = (uintptr_t)"";
}

static void mut_name_unreadable(struct bad_ctx *ctx)
{
	victim(ctx)->name = (uintptr_t)ctx->guard;
}

static void mut_name_straddle(struct bad_ctx *ctx)
{
	memset(ctx->guard - 16, 'a', 16);
	victim(ctx)->name = (uintptr_t)(ctx->guard - 16);
}

/* One byte too long: the NUL is byte PERF_JIT_CODE_NAME_MAX + 1. */
static void mut_name_too_long(struct bad_ctx *ctx)
{
	char *name = ctx->region + ctx->page;

	memset(name, 'a', PERF_JIT_CODE_NAME_MAX);
	name[PERF_JIT_CODE_NAME_MAX] = '\0';
	victim(ctx)->name = (uintptr_t)name;
}

/* No NUL in PERF_JIT_CODE_NAME_MAX bytes, and nothing readable after. */
static void mut_name_at_guard(struct bad_ctx *ctx)
{
	char *name = ctx->guard - PERF_JIT_CODE_NAME_MAX;

	memset(name, 'a', PERF_JIT_CODE_NAME_MAX);
	victim(ctx)->name = (uintptr_t)name;
}

static void mut_name_kernel(struct bad_ctx *ctx)
{
	victim(ctx)->name = KERNEL_ADDR;
}

static void mut_entries_kernel(struct bad_ctx *ctx)
{
	ctx->args->entries = KERNEL_ADDR;
}

/* The array would end past the top of the address space. */
static void mut_entries_wrap(struct bad_ctx *ctx)
{
	ctx->args->entries = ~0ULL - sizeof(struct perf_jit_code_entry) + 1;
}

static void set_flush(struct perf_jit_code_entry *e)
{
	e->op = PERF_JIT_CODE_FLUSH;
	e->name = 0;
	e->new_addr = 0;
}

static void mut_flush_name(struct bad_ctx *ctx)
{
	__u64 name = victim(ctx)->name;

	set_flush(victim(ctx));
	victim(ctx)->name = name;
}

static void mut_flush_new_addr(struct bad_ctx *ctx)
{
	set_flush(victim(ctx));
	victim(ctx)->new_addr = MOVE_BASE;
}

static void mut_flush_len_zero(struct bad_ctx *ctx)
{
	set_flush(victim(ctx));
	victim(ctx)->len = 0;
}

static void mut_flush_past_user(struct bad_ctx *ctx)
{
	set_flush(victim(ctx));
	victim(ctx)->len = 1ULL << 63;
}

FIXTURE(bad_input)
{
	struct bad_ctx ctx;
	struct ev ev;
};

FIXTURE_VARIANT(bad_input)
{
	void	(*mutate)(struct bad_ctx *ctx);
	int	err;
	int	ioctl_err;	/* if not 0, the ioctl's errno differs */
	bool	ioctl_valid;	/* the ioctl accepts it */
	bool	size_written_back;
	bool	victim;		/* the error is the victim entry's */
};

FIXTURE_VARIANT_ADD(bad_input, args_size_zero)
{
	.mutate = mut_args_size_zero,
	.err = E2BIG,
	.size_written_back = true,
};

FIXTURE_VARIANT_ADD(bad_input, args_size_small)
{
	.mutate = mut_args_size_small,
	.err = E2BIG,
	.size_written_back = true,
};

FIXTURE_VARIANT_ADD(bad_input, args_size_huge)
{
	.mutate = mut_args_size_huge,
	.err = E2BIG,
	.size_written_back = true,
};

FIXTURE_VARIANT_ADD(bad_input, args_tail)
{
	.mutate = mut_args_tail,
	.err = E2BIG,
	.size_written_back = true,
};

FIXTURE_VARIANT_ADD(bad_input, args_tail_page)
{
	.mutate = mut_args_tail_page,
	.err = E2BIG,
	.size_written_back = true,
};

FIXTURE_VARIANT_ADD(bad_input, args_pid_self)
{
	.mutate = mut_args_pid_self,
	.err = EINVAL,
	.ioctl_valid = true,
};

FIXTURE_VARIANT_ADD(bad_input, args_pid_missing)
{
	.mutate = mut_args_pid_missing,
	.err = EINVAL,
	.ioctl_err = ESRCH,
};

FIXTURE_VARIANT_ADD(bad_input, args_unreadable)
{
	.mutate = mut_args_unreadable,
	.err = EFAULT,
};

FIXTURE_VARIANT_ADD(bad_input, args_straddle)
{
	.mutate = mut_args_straddle,
	.err = EFAULT,
};

FIXTURE_VARIANT_ADD(bad_input, args_flags)
{
	.mutate = mut_args_flags,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, args_reserved)
{
	.mutate = mut_args_reserved,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, nr_zero)
{
	.mutate = mut_nr_zero,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, nr_too_many)
{
	.mutate = mut_nr_too_many,
	.err = E2BIG,
};

FIXTURE_VARIANT_ADD(bad_input, entry_size_zero)
{
	.mutate = mut_entry_size_zero,
	.err = E2BIG,
};

FIXTURE_VARIANT_ADD(bad_input, entry_size_small)
{
	.mutate = mut_entry_size_small,
	.err = E2BIG,
};

FIXTURE_VARIANT_ADD(bad_input, entry_size_huge)
{
	.mutate = mut_entry_size_huge,
	.err = E2BIG,
};

FIXTURE_VARIANT_ADD(bad_input, entry_tail)
{
	.mutate = mut_entry_tail,
	.err = E2BIG,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, entries_null)
{
	.mutate = mut_entries_null,
	.err = EFAULT,
};

FIXTURE_VARIANT_ADD(bad_input, entries_unreadable)
{
	.mutate = mut_entries_unreadable,
	.err = EFAULT,
};

FIXTURE_VARIANT_ADD(bad_input, entries_kernel)
{
	.mutate = mut_entries_kernel,
	.err = EFAULT,
};

FIXTURE_VARIANT_ADD(bad_input, entries_wrap)
{
	.mutate = mut_entries_wrap,
	.err = EFAULT,
};

FIXTURE_VARIANT_ADD(bad_input, entries_straddle)
{
	.mutate = mut_entries_straddle,
	.err = EFAULT,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, op_unknown)
{
	.mutate = mut_op_unknown,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, op_past_max)
{
	.mutate = mut_op_past_max,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, op_huge)
{
	.mutate = mut_op_huge,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, entry_flags)
{
	.mutate = mut_entry_flags,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, entry_flags_high)
{
	.mutate = mut_entry_flags_high,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, len_zero)
{
	.mutate = mut_len_zero,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, range_wraps)
{
	.mutate = mut_range_wraps,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, range_past_user)
{
	.mutate = mut_range_past_user,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, addr_kernel)
{
	.mutate = mut_addr_kernel,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, move_target_wraps)
{
	.mutate = mut_move_target_wraps,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, move_target_kernel)
{
	.mutate = mut_move_target_kernel,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, move_name)
{
	.mutate = mut_move_name,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, load_new_addr)
{
	.mutate = mut_load_new_addr,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, unload_new_addr)
{
	.mutate = mut_unload_new_addr,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, unload_name)
{
	.mutate = mut_unload_name,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, flush_name)
{
	.mutate = mut_flush_name,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, flush_new_addr)
{
	.mutate = mut_flush_new_addr,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, flush_len_zero)
{
	.mutate = mut_flush_len_zero,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, flush_past_user)
{
	.mutate = mut_flush_past_user,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, load_no_name)
{
	.mutate = mut_load_no_name,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, load_empty_name)
{
	.mutate = mut_load_empty_name,
	.err = EINVAL,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, name_unreadable)
{
	.mutate = mut_name_unreadable,
	.err = EFAULT,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, name_straddle)
{
	.mutate = mut_name_straddle,
	.err = EFAULT,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, name_kernel)
{
	.mutate = mut_name_kernel,
	.err = EFAULT,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, name_too_long)
{
	.mutate = mut_name_too_long,
	.err = ENAMETOOLONG,
	.victim = true,
};

FIXTURE_VARIANT_ADD(bad_input, name_at_guard)
{
	.mutate = mut_name_at_guard,
	.err = ENAMETOOLONG,
	.victim = true,
};

FIXTURE_SETUP(bad_input)
{
	struct bad_ctx *ctx = &self->ctx;

	self->ev.fd = -1;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");

	ctx->page = page_size();
	ctx->region = mmap(NULL, 4 * ctx->page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(ctx->region != MAP_FAILED);
	ctx->guard = ctx->region + 3 * ctx->page;
	ASSERT_EQ(0, mprotect(ctx->guard, ctx->page, PROT_NONE));
	ctx->args = (void *)ctx->region;

	ctx->entries_len = (PERF_JIT_CODE_MAX_ENTRIES + 1) *
			   sizeof(struct perf_jit_code_entry) +
			   (VICTIM + 1) * (ctx->page + 8);
	ctx->entries = malloc(ctx->entries_len);
	ASSERT_TRUE(!!ctx->entries);

	bad_reset(ctx);
	variant->mutate(ctx);
}

FIXTURE_TEARDOWN(bad_input)
{
	ev_close(&self->ev);
	free(self->ctx.entries);
	if (self->ctx.region && self->ctx.region != MAP_FAILED)
		munmap(self->ctx.region, 4 * self->ctx.page);
}

static int bad_emit(struct ev *ev, bool ioctl, const void *uargs)
{
	return ioctl ? jit_ioctl(ev->fd, uargs) : jit_prctl(uargs);
}

/*
 * The variant's call and what it delivers, then the valid call. @err is
 * the call's errno, 0 when it is valid.
 */
static void bad_check(struct __test_metadata *_metadata,
		      struct bad_ctx *ctx, struct ev *ev, bool ioctl, int err,
		      bool victim, bool size_written_back)
{
	const struct perf_event_header *jit[VICTIM + 2];
	__u32 flags = ioctl ? PERF_JIT_CODE_FLAGS_SYNTHESIZED : 0;
	unsigned int i, n = err ? 0 : VICTIM + 1;
	struct perf_jit_code_entry e;
	struct records recs = {};
	pid_t pid = getpid();
	int ret;

	ret = bad_emit(ev, ioctl, ctx->uargs);
	if (size_written_back)
		EXPECT_EQ(sizeof(struct perf_jit_code_args),
			  (size_t)ctx->args->size);
	if (err && victim)
		n = VICTIM;
	EXPECT_EQ(err && !victim ? -err : (int)n, ret);

	/* Exactly the entries the count says, as given */
	ASSERT_EQ(0, ev_drain(ev, &recs));
	EXPECT_EQ(n, recs.nr);
	ASSERT_EQ(n, jit_select(&recs, ANY_PID, jit, VICTIM + 2));
	for (i = 0; i < n; i++) {
		memcpy(&e, bad_entry(ctx, i), sizeof(e));
		expect_jit(_metadata, jit[i], &e, pid, pid, flags);
	}
	records_free(&recs);
	if (!err)
		return;

	if (victim) {
		/* From the victim on, the call fails at once. */
		ctx->args->entries += VICTIM * ctx->args->entry_size;
		ctx->args->nr_entries -= VICTIM;
		EXPECT_EQ(-err, bad_emit(ev, ioctl, ctx->args));
		ASSERT_EQ(0, ev_drain(ev, &recs));
		EXPECT_EQ(0U, recs.nr);
		records_free(&recs);
	}

	bad_reset(ctx);
	ASSERT_EQ(VICTIM + 1, bad_emit(ev, ioctl, ctx->args));
	ASSERT_EQ(0, ev_drain(ev, &recs));
	EXPECT_EQ(VICTIM + 1U, records_count(&recs, PERF_RECORD_JIT_CODE));
	records_free(&recs);
}

TEST_F(bad_input, prctl)
{
	open_listener(_metadata, &self->ev);
	bad_check(_metadata, &self->ctx, &self->ev, false, variant->err,
		  variant->victim, variant->size_written_back);
}

TEST_F(bad_input, ioctl)
{
	int err = variant->ioctl_err ? variant->ioctl_err : variant->err;

	if (variant->ioctl_valid)
		err = 0;
	open_listener(_metadata, &self->ev);
	bad_check(_metadata, &self->ctx, &self->ev, true, err,
		  variant->victim, variant->size_written_back);
}

/*
 * The prctl checks the entries but reads no name when nothing would
 * receive a record from the caller: no jit_code event in its task context
 * (enabled or not, inherited ones included) and no CPU-wide jit_code event
 * on its CPU. An entry that is not valid fails the same way either way; a
 * name that cannot be read fails only when it is read, and that is how
 * the tests see which way it went.
 *
 * Only events in the caller's own context and CPU-wide events on its CPU
 * count, so the test pins itself to one CPU, and other per-task events or
 * CPU-wide events on other CPUs on the machine do not change the results.
 * A CPU-wide jit_code event of someone else on that CPU would make the
 * short-cut variants fail; in a kselftest VM there is none.
 */
enum listener {
	L_NONE,			/* no event at all */
	L_PLAIN,		/* an event on the caller without jit_code */
	L_OTHER_TASK,		/* a jit_code event on another process */
	L_CPU_WIDE_OTHER_CPU,	/* a CPU-wide one on the other CPU */
	L_TASK,			/* a jit_code event on the caller */
	L_TASK_DISABLED,	/* the same, opened disabled */
	L_TASK_OTHER_CPU,	/* the same, counting on the other CPU only */
	L_CPU_WIDE,		/* a CPU-wide one on the caller's CPU */
	L_INHERITED,		/* the caller is a child with an inherited one */
};

/* Where the shortcut tests put their arguments */
struct shortcut_mem {
	char	*region;	/* arguments */
	char	*guard;		/* the PROT_NONE page after it */
	long	page;
};

FIXTURE(shortcut)
{
	struct ev ev;
	struct shortcut_mem mem;
	pid_t sleeper;
	int release;
	int cpus[2];
};

FIXTURE_VARIANT(shortcut)
{
	enum listener	listener;
	bool		shortcut;	/* the names are not read */
	bool		delivered;	/* the records reach ev */
};

FIXTURE_VARIANT_ADD(shortcut, no_event)
{
	.listener = L_NONE,
	.shortcut = true,
};

FIXTURE_VARIANT_ADD(shortcut, plain_event)
{
	.listener = L_PLAIN,
	.shortcut = true,
};

FIXTURE_VARIANT_ADD(shortcut, other_task)
{
	.listener = L_OTHER_TASK,
	.shortcut = true,
};

FIXTURE_VARIANT_ADD(shortcut, cpu_wide_other_cpu)
{
	.listener = L_CPU_WIDE_OTHER_CPU,
	.shortcut = true,
};

FIXTURE_VARIANT_ADD(shortcut, task)
{
	.listener = L_TASK,
	.delivered = true,
};

FIXTURE_VARIANT_ADD(shortcut, task_disabled)
{
	.listener = L_TASK_DISABLED,
};

FIXTURE_VARIANT_ADD(shortcut, task_other_cpu)
{
	.listener = L_TASK_OTHER_CPU,
};

FIXTURE_VARIANT_ADD(shortcut, cpu_wide)
{
	.listener = L_CPU_WIDE,
	.delivered = true,
};

FIXTURE_VARIANT_ADD(shortcut, inherited)
{
	.listener = L_INHERITED,
	.delivered = true,
};

FIXTURE_SETUP(shortcut)
{
	enum listener l = variant->listener;
	struct perf_event_attr attr;
	int nr, ret = 0;

	self->ev.fd = -1;
	self->release = -1;
	self->sleeper = -1;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	nr = allowed_cpus(self->cpus, 2);
	ASSERT_GE(nr, 1);
	if ((l == L_CPU_WIDE_OTHER_CPU || l == L_TASK_OTHER_CPU) && nr < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pin_to_cpu(self->cpus[0]));

	self->mem.page = page_size();
	self->mem.region = mmap(NULL, 2 * self->mem.page,
				PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(self->mem.region != MAP_FAILED);
	self->mem.guard = self->mem.region + self->mem.page;
	ASSERT_EQ(0, mprotect(self->mem.guard, self->mem.page, PROT_NONE));

	attr_init(&attr, true);
	switch (l) {
	case L_NONE:
		break;
	case L_PLAIN:
		attr_init(&attr, false);
		attr.comm = 1;
		ret = ev_open(&self->ev, &attr, 0, -1, DATA_PAGES);
		break;
	case L_OTHER_TASK:
		self->sleeper = spawn_sleeper(&self->release);
		ASSERT_GT(self->sleeper, 0);
		ret = ev_open(&self->ev, &attr, self->sleeper, -1, DATA_PAGES);
		break;
	case L_CPU_WIDE_OTHER_CPU:
		ret = open_cpu_wide(&self->ev, self->cpus[1]);
		break;
	case L_TASK:
		ret = ev_open(&self->ev, &attr, 0, -1, DATA_PAGES);
		break;
	case L_TASK_DISABLED:
		attr.disabled = 1;
		ret = ev_open(&self->ev, &attr, 0, -1, DATA_PAGES);
		break;
	case L_TASK_OTHER_CPU:
		ret = ev_open(&self->ev, &attr, 0, self->cpus[1], DATA_PAGES);
		break;
	case L_CPU_WIDE:
		ret = open_cpu_wide(&self->ev, self->cpus[0]);
		break;
	case L_INHERITED:
		/* mmap() refuses an inherited event with cpu == -1 */
		attr.inherit = 1;
		ret = ev_open(&self->ev, &attr, 0, self->cpus[0], DATA_PAGES);
		break;
	}
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(shortcut)
{
	ev_close(&self->ev);
	if (self->release >= 0)
		close(self->release);
	if (self->sleeper > 0)
		wait_exit(self->sleeper);
	if (self->mem.region && self->mem.region != MAP_FAILED)
		munmap(self->mem.region, 2 * self->mem.page);
}

/*
 * Run @calls in this process, or in a child (that inherited the event).
 * Returns the pid of the process that made the calls.
 */
static pid_t shortcut_run(struct __test_metadata *_metadata,
			  struct shortcut_mem *mem, bool in_child,
			  bool shortcut,
			  void (*calls)(struct __test_metadata *_metadata,
					struct shortcut_mem *mem,
					bool shortcut))
{
	pid_t child;

	if (!in_child) {
		calls(_metadata, mem, shortcut);
		return getpid();
	}
	child = fork();
	if (child == 0) {
		calls(_metadata, mem, shortcut);
		_exit(0);
	}
	EXPECT_LT(0, child);
	EXPECT_EQ(0, wait_exit(child));
	return child;
}

/*
 * Entries the kernel rejects, listened to or not, and a name it reads
 * only for a listener.
 */
static void shortcut_entry_calls(struct __test_metadata *_metadata,
				 struct shortcut_mem *mem, bool shortcut)
{
	struct perf_jit_code_entry e[3];
	struct perf_jit_code_args args;

	args_init(&args, mem->guard, 3);
	EXPECT_EQ(-EFAULT, jit_prctl(&args));
	args.entries = KERNEL_ADDR;
	EXPECT_EQ(-EFAULT, jit_prctl(&args));

	entries_mixed(e, 1, "jit_shortcut_bad");
	e[0].op = PERF_JIT_CODE_UNKNOWN;
	args_init(&args, e, 3);
	EXPECT_EQ(-EINVAL, jit_prctl(&args));

	/* The entries stop at the bad one; the first gets through. */
	entries_mixed(e, 2, "jit_shortcut_first");
	e[1].flags = 1;
	EXPECT_EQ(1, jit_prctl(&args));
	/* The call that starts at the bad one fails. */
	args_init(&args, &e[1], 2);
	EXPECT_EQ(-EINVAL, jit_prctl(&args));

	/* A name in the guard page: read only for a listener. */
	entries_mixed(e, 6, "jit_shortcut_name");
	e[0].name = (uintptr_t)mem->guard;
	args_init(&args, e, 3);
	EXPECT_EQ(shortcut ? 3 : -EFAULT, jit_prctl(&args));

	entries_mixed(e, 3, "jit_shortcut_valid");
	EXPECT_EQ(3, jit_prctl(&args));
}

/* The records of shortcut_entry_calls() from @pid: all or none */
static void expect_shortcut_records(struct __test_metadata *_metadata,
				    struct ev *ev, pid_t pid, bool delivered)
{
	const struct perf_event_header *jit[5];
	struct perf_jit_code_entry e[3];
	struct records recs = {};
	unsigned int i, n;

	if (!ev->map)
		return;
	ASSERT_EQ(0, ev_drain(ev, &recs));
	n = jit_select(&recs, pid, jit, 5);
	if (!delivered) {
		EXPECT_EQ(0U, n);
		goto out;
	}
	ASSERT_EQ(4U, n);
	entries_mixed(e, 2, "jit_shortcut_first");
	expect_jit(_metadata, jit[0], &e[0], pid, pid, 0);
	entries_mixed(e, 3, "jit_shortcut_valid");
	for (i = 0; i < 3; i++)
		expect_jit(_metadata, jit[i + 1], &e[i], pid, pid, 0);
out:
	records_free(&recs);
}

TEST_F(shortcut, entries_unread)
{
	struct perf_jit_code_entry e[3];
	struct perf_jit_code_args args;
	struct records recs = {};
	pid_t pid;

	pid = shortcut_run(_metadata, &self->mem,
			   variant->listener == L_INHERITED, variant->shortcut,
			   shortcut_entry_calls);
	expect_shortcut_records(_metadata, &self->ev, pid, variant->delivered);

	/*
	 * A disabled event or one on the other CPU makes the kernel read the
	 * entries, but receives nothing until it is enabled or the caller
	 * runs there.
	 */
	if (variant->listener != L_TASK_DISABLED &&
	    variant->listener != L_TASK_OTHER_CPU)
		return;
	if (variant->listener == L_TASK_DISABLED)
		ASSERT_EQ(0, ioctl(self->ev.fd, PERF_EVENT_IOC_ENABLE, 0));
	if (variant->listener == L_TASK_OTHER_CPU)
		ASSERT_EQ(0, pin_to_cpu(self->cpus[1]));
	entries_mixed(e, 4, "jit_shortcut_live");
	args_init(&args, e, 3);
	ASSERT_EQ(3, jit_prctl(&args));
	ASSERT_EQ(0, ev_drain(&self->ev, &recs));
	EXPECT_EQ(3U, records_count(&recs, PERF_RECORD_JIT_CODE));
	records_free(&recs);
}

/* Arguments are checked whether or not the entries are read. */
static void shortcut_args_calls(struct __test_metadata *_metadata,
				struct shortcut_mem *mem, bool shortcut)
{
	struct perf_jit_code_args *args = (void *)mem->region;
	struct perf_jit_code_entry e[3];
	unsigned int i;
	int err;

	entries_mixed(e, 5, "jit_shortcut_args");
	for (i = 0; i < 10; i++) {
		args_init(args, e, 3);
		switch (i) {
		case 0:
			args->size = 0;
			err = E2BIG;
			break;
		case 1:
			args->size = PERF_JIT_CODE_ARGS_SIZE_VER0 - 1;
			err = E2BIG;
			break;
		case 2:
			args->size = mem->page + 1;
			err = E2BIG;
			break;
		case 3:
			args->flags = 1;
			err = EINVAL;
			break;
		case 4:
			args->__reserved = 1;
			err = EINVAL;
			break;
		case 5:
			args->pid = getpid();
			err = EINVAL;
			break;
		case 6:
			args->nr_entries = 0;
			err = EINVAL;
			break;
		case 7:
			args->nr_entries = PERF_JIT_CODE_MAX_ENTRIES + 1;
			err = E2BIG;
			break;
		case 8:
			args->entry_size = PERF_JIT_CODE_ENTRY_SIZE_VER0 - 1;
			err = E2BIG;
			break;
		default:
			args->entry_size = mem->page + 8;
			err = E2BIG;
			break;
		}
		EXPECT_EQ(-err, jit_prctl(args)) TH_LOG("case %u", i);
	}
	EXPECT_EQ(-EFAULT, jit_prctl(mem->guard));
	args_init(args, e, 3);
	EXPECT_EQ(-1, prctl(PR_PERF_JIT_CODE, (unsigned long)args, 0UL, 1UL,
			    0UL));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(shortcut, args_checked)
{
	struct records recs = {};
	pid_t pid;

	pid = shortcut_run(_metadata, &self->mem,
			   variant->listener == L_INHERITED, variant->shortcut,
			   shortcut_args_calls);
	if (!self->ev.map)
		return;
	ASSERT_EQ(0, ev_drain(&self->ev, &recs));
	EXPECT_EQ(0U, jit_select(&recs, pid, NULL, 0));
	records_free(&recs);
}

/*
 * The ioctl writes into the one event it is called on, whatever that event
 * monitors and wherever its buffer lives, never into other events. Every
 * record names the process it describes, in its sample_id too, not the
 * task that happens to run the write.
 */
enum ioctl_on {
	ON_SELF,	/* pid 0 */
	ON_CPU,		/* pid -1 */
	ON_OTHER_TASK,	/* pid of a sleeping child */
};

FIXTURE(ioctl_target)
{
	struct ev ev;
	struct ev bystander;	/* a jit_code event on the caller */
	pid_t sleeper;
	int release;
	int cpu;
};

FIXTURE_VARIANT(ioctl_target)
{
	enum ioctl_on		target;
	enum ev_cpu		cpu;
};

FIXTURE_VARIANT_ADD(ioctl_target, task)
{
	.target = ON_SELF,
	.cpu = ANY_CPU,
};

FIXTURE_VARIANT_ADD(ioctl_target, task_this_cpu)
{
	.target = ON_SELF,
	.cpu = THIS_CPU,
};

FIXTURE_VARIANT_ADD(ioctl_target, task_other_cpu)
{
	.target = ON_SELF,
	.cpu = OTHER_CPU,
};

FIXTURE_VARIANT_ADD(ioctl_target, cpu_wide)
{
	.target = ON_CPU,
	.cpu = THIS_CPU,
};

FIXTURE_VARIANT_ADD(ioctl_target, cpu_wide_other_cpu)
{
	.target = ON_CPU,
	.cpu = OTHER_CPU,
};

FIXTURE_VARIANT_ADD(ioctl_target, other_task)
{
	.target = ON_OTHER_TASK,
	.cpu = ANY_CPU,
};

FIXTURE_VARIANT_ADD(ioctl_target, other_task_this_cpu)
{
	.target = ON_OTHER_TASK,
	.cpu = THIS_CPU,
};

FIXTURE_VARIANT_ADD(ioctl_target, other_task_other_cpu)
{
	.target = ON_OTHER_TASK,
	.cpu = OTHER_CPU,
};

FIXTURE_SETUP(ioctl_target)
{
	struct perf_event_attr attr;
	int cpus[2], nr, ret;
	pid_t pid;

	self->ev.fd = -1;
	self->bystander.fd = -1;
	self->release = -1;
	self->sleeper = -1;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	nr = allowed_cpus(cpus, 2);
	ASSERT_GE(nr, 1);
	if (variant->cpu == OTHER_CPU && nr < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pin_to_cpu(cpus[0]));
	self->cpu = variant->cpu == ANY_CPU ? -1 :
		    cpus[variant->cpu == OTHER_CPU];

	self->sleeper = spawn_sleeper(&self->release);
	ASSERT_GT(self->sleeper, 0);

	if (variant->target == ON_SELF)
		pid = 0;
	else if (variant->target == ON_CPU)
		pid = -1;
	else
		pid = self->sleeper;
	attr_init(&attr, true);
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	ret = ev_open(&self->ev, &attr, pid, self->cpu, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	attr_init(&attr, true);
	ASSERT_EQ(0, ev_open(&self->bystander, &attr, 0, -1, DATA_PAGES));
}

FIXTURE_TEARDOWN(ioctl_target)
{
	ev_close(&self->bystander);
	ev_close(&self->ev);
	if (self->release >= 0)
		close(self->release);
	if (self->sleeper > 0)
		wait_exit(self->sleeper);
}

TEST_F(ioctl_target, delivers_here_only)
{
	const struct perf_event_header *jit[4];
	struct perf_jit_code_entry e[3], s;
	struct perf_jit_code_args args;
	struct records recs = {};
	pid_t pid = getpid();
	const struct sample_id *sid;
	__u64 t0, t1, t2;
	unsigned int i;

	entries_mixed(e, 1, "jit_replayed");
	entry_load(&s, CODE_BASE + 0x2000, 0x40, 2, "jit_sleeper");

	t0 = clock_ns(CLOCK_MONOTONIC);
	args_init(&args, e, 3);
	ASSERT_EQ(3, jit_ioctl(self->ev.fd, &args));
	t1 = clock_ns(CLOCK_MONOTONIC);
	args_init(&args, &s, 1);
	args.pid = self->sleeper;
	ASSERT_EQ(1, jit_ioctl(self->ev.fd, &args));
	t2 = clock_ns(CLOCK_MONOTONIC);

	ASSERT_EQ(0, ev_drain(&self->ev, &recs));
	/* A CPU-wide event also takes the records of others on its CPU. */
	if (variant->target != ON_CPU)
		EXPECT_EQ(4U, recs.nr);
	ASSERT_EQ(3U, jit_select(&recs, pid, jit, 4));
	for (i = 0; i < 3; i++) {
		sid = rec_sample_id(jit[i]);
		expect_jit(_metadata, jit[i], &e[i], pid, pid,
			   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
		EXPECT_EQ((__u32)pid, sid->pid);
		EXPECT_EQ((__u32)pid, sid->tid);
		EXPECT_EQ(self->ev.id, sid->id);
		EXPECT_LE(t0, sid->time);
		EXPECT_GE(t1, sid->time);
		/* Written on the CPU that owns the buffer. */
		if (self->cpu >= 0)
			EXPECT_EQ((__u32)self->cpu, sid->cpu);
	}

	ASSERT_EQ(1U, jit_select(&recs, self->sleeper, jit, 4));
	sid = rec_sample_id(jit[0]);
	expect_jit(_metadata, jit[0], &s, self->sleeper, self->sleeper,
		   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
	EXPECT_EQ((__u32)self->sleeper, sid->pid);
	EXPECT_EQ((__u32)self->sleeper, sid->tid);
	EXPECT_EQ(self->ev.id, sid->id);
	EXPECT_LE(t1, sid->time);
	EXPECT_GE(t2, sid->time);
	if (self->cpu >= 0)
		EXPECT_EQ((__u32)self->cpu, sid->cpu);
	records_free(&recs);

	ASSERT_EQ(0, ev_drain(&self->bystander, &recs));
	EXPECT_EQ(0U, records_count(&recs, PERF_RECORD_JIT_CODE));
	records_free(&recs);
}

/*
 * A LOST record that the ioctl's write emits (losses pending in the
 * buffer) carries the sample_id of the record it precedes, that is of the
 * process the ioctl describes: not the writer's, nor that of the task the
 * event monitors. A child fills its own event's one-page buffer with the
 * prctl to make the losses; the ioctl then describes a third process.
 */
FIXTURE(lost_sample_id)
{
	struct ev ev;
	pid_t emitter, described;
	int go, done, release;
	int cpu;
};

FIXTURE_VARIANT(lost_sample_id)
{
	enum ev_cpu	cpu;
};

FIXTURE_VARIANT_ADD(lost_sample_id, any_cpu)
{
	.cpu = ANY_CPU,
};

FIXTURE_VARIANT_ADD(lost_sample_id, this_cpu)
{
	.cpu = THIS_CPU,
};

FIXTURE_VARIANT_ADD(lost_sample_id, other_cpu)
{
	.cpu = OTHER_CPU,
};

#define LOST_EMITTED	256

/* Emit LOST_EMITTED entries when told to, say how it went, then wait. */
static void lost_emitter(int cpu, int go, int done)
{
	struct perf_jit_code_entry e[LOST_EMITTED];
	struct perf_jit_code_args args;
	unsigned int i;
	char c = 'n';

	if (cpu >= 0 && pin_to_cpu(cpu))
		_exit(1);
	if (read(go, &c, 1) != 1)
		_exit(1);
	for (i = 0; i < LOST_EMITTED; i++)
		entry_unload(&e[i], CODE_BASE + i * 0x100ULL, 0x100, i);
	args_init(&args, e, LOST_EMITTED);
	c = jit_call_all(-1, &args) == LOST_EMITTED ? 'y' : 'n';
	if (write(done, &c, 1) != 1)
		_exit(1);
	while (read(go, &c, 1) > 0)
		;
	_exit(0);
}

FIXTURE_SETUP(lost_sample_id)
{
	struct perf_event_attr attr;
	int cpus[2], go[2], done[2], nr, ret;

	self->ev.fd = -1;
	self->emitter = -1;
	self->described = -1;
	self->go = -1;
	self->done = -1;
	self->release = -1;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	nr = allowed_cpus(cpus, 2);
	ASSERT_GE(nr, 1);
	if (variant->cpu == OTHER_CPU && nr < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pin_to_cpu(cpus[0]));
	self->cpu = variant->cpu == ANY_CPU ? -1 :
		    cpus[variant->cpu == OTHER_CPU];

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	self->emitter = fork();
	ASSERT_GE(self->emitter, 0);
	if (self->emitter == 0) {
		close(go[1]);
		close(done[0]);
		lost_emitter(self->cpu, go[0], done[1]);
	}
	close(go[0]);
	close(done[1]);
	self->go = go[1];
	self->done = done[0];

	self->described = spawn_sleeper(&self->release);
	ASSERT_GT(self->described, 0);

	attr_init(&attr, true);
	ret = ev_open(&self->ev, &attr, self->emitter, self->cpu, 1);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(lost_sample_id)
{
	ev_close(&self->ev);
	if (self->go >= 0)
		close(self->go);
	if (self->done >= 0)
		close(self->done);
	if (self->release >= 0)
		close(self->release);
	if (self->emitter > 0)
		wait_exit(self->emitter);
	if (self->described > 0)
		wait_exit(self->described);
}

TEST_F(lost_sample_id, described)
{
	const struct lost_record *lost;
	const struct sample_id *sid;
	struct perf_jit_code_entry e;
	struct perf_jit_code_args args;
	struct records recs = {};
	pid_t described = self->described;
	unsigned int n;
	char c;

	ASSERT_EQ(1, write(self->go, "g", 1));
	ASSERT_EQ(1, read(self->done, &c, 1));
	ASSERT_EQ('y', c);

	/* The losses are pending: no LOST record yet. */
	ASSERT_EQ(0, ev_drain(&self->ev, &recs));
	n = jit_select(&recs, self->emitter, NULL, 0);
	EXPECT_EQ(n, recs.nr);
	ASSERT_LT(0U, n);
	ASSERT_GT(LOST_EMITTED, n);
	records_free(&recs);

	entry_load(&e, CODE_BASE, 0x100, 1, "jit_after_losses");
	args_init(&args, &e, 1);
	args.pid = described;
	ASSERT_EQ(1, jit_ioctl(self->ev.fd, &args));

	ASSERT_EQ(0, ev_drain(&self->ev, &recs));
	ASSERT_EQ(2U, recs.nr);
	lost = (const void *)recs.rec[0];
	ASSERT_EQ((__u32)PERF_RECORD_LOST, lost->header.type);
	ASSERT_EQ(LOST_RECORD_SIZE, lost->header.size);
	EXPECT_EQ(self->ev.id, lost->id);
	EXPECT_EQ((__u64)(LOST_EMITTED - n), lost->lost);

	expect_jit(_metadata, recs.rec[1], &e, described, described,
		   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
	sid = rec_sample_id(recs.rec[1]);
	EXPECT_EQ((__u32)described, sid->pid);
	EXPECT_EQ((__u32)described, sid->tid);
	EXPECT_EQ(self->ev.id, sid->id);
	if (self->cpu >= 0)
		EXPECT_EQ((__u32)self->cpu, sid->cpu);

	/* The LOST record's sample_id is the JIT record's, all of it. */
	sid = rec_sample_id(&lost->header);
	EXPECT_EQ((__u32)described, sid->pid);
	EXPECT_EQ((__u32)described, sid->tid);
	EXPECT_EQ(0, memcmp(sid, rec_sample_id(recs.rec[1]), sizeof(*sid)));
	records_free(&recs);
}

/*
 * Naming another process takes ptrace read access to it: an unprivileged
 * child may describe itself through an fd it inherited, not its root
 * parent, and a pid that names nobody is ESRCH.
 */
TEST_F(jit_code, ioctl_permission)
{
	const struct perf_event_header *jit[3];
	struct perf_jit_code_entry e;
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct records recs = {};
	pid_t parent = getpid(), child;
	struct ev ev;
	int ret;

	if (geteuid() != 0)
		SKIP(return, "needs root to drop to an unprivileged user");
	attr_init(&attr, true);
	ret = ev_open(&ev, &attr, 0, -1, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
	entry_load(&e, CODE_BASE, 0x100, 1, "jit_unprivileged");

	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		if (drop_to_nobody())
			_exit(KSFT_SKIP);
		args_init(&args, &e, 1);
		args.pid = parent;
		EXPECT_EQ(-EACCES, jit_ioctl(ev.fd, &args));
		args.pid = INT_MAX;
		EXPECT_EQ(-ESRCH, jit_ioctl(ev.fd, &args));
		args.pid = getpid();
		EXPECT_EQ(1, jit_ioctl(ev.fd, &args));
		args.pid = 0;
		EXPECT_EQ(1, jit_ioctl(ev.fd, &args));
		_exit(_metadata->exit_code);
	}
	ret = wait_exit(child);
	if (ret == KSFT_SKIP)
		SKIP(return, "cannot drop privileges");
	ASSERT_EQ(0, ret);

	/* Only the calls that described the child itself got through. */
	ASSERT_EQ(0, ev_drain(&ev, &recs));
	ASSERT_EQ(2U, jit_select(&recs, ANY_PID, jit, 3));
	expect_jit(_metadata, jit[0], &e, child, child,
		   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
	expect_jit(_metadata, jit[1], &e, child, child,
		   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
	records_free(&recs);
	ev_close(&ev);
}

static void *wait_barrier(void *p)
{
	struct thread_arg *arg = p;

	arg->tid = sys_gettid();
	pthread_barrier_wait(&arg->barrier);	/* tid published */
	pthread_barrier_wait(&arg->barrier);	/* done with it */
	return NULL;
}

/* args.pid names a process: a thread that does not lead one is ESRCH. */
TEST_F(jit_code, ioctl_pid_thread)
{
	const struct perf_event_header *jit[2];
	struct perf_jit_code_entry e;
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct thread_arg arg = {};
	struct records recs = {};
	pid_t pid = getpid();
	pthread_t thread;
	struct ev ev;
	int ret;

	attr_init(&attr, true);
	ret = ev_open(&ev, &attr, 0, -1, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	ASSERT_EQ(0, pthread_barrier_init(&arg.barrier, NULL, 2));
	ASSERT_EQ(0, pthread_create(&thread, NULL, wait_barrier, &arg));
	pthread_barrier_wait(&arg.barrier);

	entry_load(&e, CODE_BASE, 0x100, 1, "jit_thread_pid");
	args_init(&args, &e, 1);
	args.pid = arg.tid;
	ret = jit_ioctl(ev.fd, &args);
	args.pid = pid;
	EXPECT_EQ(1, jit_ioctl(ev.fd, &args));
	pthread_barrier_wait(&arg.barrier);
	ASSERT_EQ(0, pthread_join(thread, NULL));
	ASSERT_NE(pid, arg.tid);
	EXPECT_EQ(-ESRCH, ret);

	ASSERT_EQ(0, ev_drain(&ev, &recs));
	ASSERT_EQ(1U, jit_select(&recs, ANY_PID, jit, 2));
	expect_jit(_metadata, jit[0], &e, pid, pid,
		   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
	records_free(&recs);
	pthread_barrier_destroy(&arg.barrier);
	ev_close(&ev);
}

/* An event without a ring buffer: ENOBUFS, not a silent success. */
TEST_F(jit_code, ioctl_no_buffer)
{
	struct perf_jit_code_entry e;
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct ev ev;
	int ret;

	attr_init(&attr, true);
	ret = ev_open(&ev, &attr, 0, -1, 0);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	entry_load(&e, CODE_BASE, 0x100, 1, "jit_nowhere");
	args_init(&args, &e, 1);
	EXPECT_EQ(JIT_OPS_MASK, ioctl(ev.fd, PERF_EVENT_IOC_JIT_CODE, NULL));
	EXPECT_EQ(-ENOBUFS, jit_ioctl(ev.fd, &args));
	ev_close(&ev);

	/* Once unmapped, the event has no buffer either. */
	ASSERT_EQ(0, ev_open(&ev, &attr, 0, -1, DATA_PAGES));
	EXPECT_EQ(1, jit_ioctl(ev.fd, &args));
	ASSERT_EQ(0, munmap(ev.map, ev.map_len));
	ev.map = NULL;
	EXPECT_EQ(-ENOBUFS, jit_ioctl(ev.fd, &args));
	ev_close(&ev);
}

/* The task of a per-task event exited: ESRCH, whatever the event's CPU. */
TEST_F(jit_code, ioctl_exited_task)
{
	struct perf_jit_code_entry e;
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct records recs = {};
	struct ev any, bound;
	pid_t sleeper;
	int release, ret;

	sleeper = spawn_sleeper(&release);
	ASSERT_GT(sleeper, 0);
	attr_init(&attr, true);
	ret = ev_open(&any, &attr, sleeper, -1, DATA_PAGES);
	if (perf_unavailable(ret)) {
		close(release);
		wait_exit(sleeper);
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	}
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, ev_open(&bound, &attr, sleeper, self->cpus[0],
			     DATA_PAGES));

	/* The caller describes itself, which exists throughout. */
	entry_load(&e, CODE_BASE, 0x100, 1, "jit_before_exit");
	args_init(&args, &e, 1);
	EXPECT_EQ(1, jit_ioctl(any.fd, &args));
	EXPECT_EQ(1, jit_ioctl(bound.fd, &args));

	close(release);
	ASSERT_EQ(0, wait_exit(sleeper));
	EXPECT_EQ(-ESRCH, jit_ioctl(any.fd, &args));
	EXPECT_EQ(-ESRCH, jit_ioctl(bound.fd, &args));

	ASSERT_EQ(0, ev_drain(&any, &recs));
	EXPECT_EQ(1U, records_count(&recs, PERF_RECORD_JIT_CODE));
	records_free(&recs);
	ASSERT_EQ(0, ev_drain(&bound, &recs));
	EXPECT_EQ(1U, records_count(&recs, PERF_RECORD_JIT_CODE));
	records_free(&recs);
	ev_close(&bound);
	ev_close(&any);
}

/*
 * An event opened disabled gets no records from the prctl, but does get
 * those of the ioctl (a profiler replays before it enables).
 */
TEST_F(jit_code, disabled_event)
{
	const struct perf_event_header *jit[4];
	struct perf_jit_code_entry e[3];
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct records recs = {};
	pid_t pid = getpid();
	unsigned int i;
	struct ev ev;
	int ret;

	attr_init(&attr, true);
	attr.disabled = 1;
	ret = ev_open(&ev, &attr, 0, -1, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	entries_mixed(e, 1, "jit_while_disabled");
	args_init(&args, e, 3);
	ASSERT_EQ(3, jit_prctl(&args));
	ASSERT_EQ(0, ev_drain(&ev, &recs));
	EXPECT_EQ(0U, recs.nr);
	records_free(&recs);

	ASSERT_EQ(3, jit_ioctl(ev.fd, &args));
	ASSERT_EQ(0, ev_drain(&ev, &recs));
	ASSERT_EQ(3U, jit_select(&recs, ANY_PID, jit, 4));
	for (i = 0; i < 3; i++)
		expect_jit(_metadata, jit[i], &e[i], pid, pid,
			   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
	records_free(&recs);

	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_ENABLE, 0));
	ASSERT_EQ(3, jit_prctl(&args));
	ASSERT_EQ(0, ev_drain(&ev, &recs));
	ASSERT_EQ(3U, jit_select(&recs, ANY_PID, jit, 4));
	for (i = 0; i < 3; i++)
		expect_jit(_metadata, jit[i], &e[i], pid, pid, 0);
	records_free(&recs);
	ev_close(&ev);
}

/*
 * Two events, one buffer (PERF_EVENT_IOC_SET_OUTPUT): the ioctl on either
 * writes there with the id of the event it was called on, and the prctl
 * gives each event its own record.
 */
TEST_F(jit_code, set_output)
{
	const struct perf_event_header *jit[3];
	struct perf_jit_code_entry e[3];
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct records recs = {};
	pid_t pid = getpid();
	__u64 id0, id1;
	struct ev a, b;
	int ret;

	attr_init(&attr, true);
	ret = ev_open(&a, &attr, 0, -1, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, ev_open(&b, &attr, 0, -1, 0));
	ASSERT_EQ(0, ioctl(b.fd, PERF_EVENT_IOC_SET_OUTPUT, a.fd));
	ASSERT_NE(a.id, b.id);

	entry_load(&e[0], CODE_BASE, 0x100, 1, "jit_via_redirected");
	entry_load(&e[1], CODE_BASE + 0x100, 0x100, 2, "jit_via_owner");
	entry_unload(&e[2], CODE_BASE, 0x100, 1);
	args_init(&args, &e[0], 1);
	ASSERT_EQ(1, jit_ioctl(b.fd, &args));
	args_init(&args, &e[1], 1);
	ASSERT_EQ(1, jit_ioctl(a.fd, &args));

	ASSERT_EQ(0, ev_drain(&a, &recs));
	ASSERT_EQ(2U, jit_select(&recs, ANY_PID, jit, 3));
	expect_jit(_metadata, jit[0], &e[0], pid, pid,
		   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
	EXPECT_EQ(b.id, rec_sample_id(jit[0])->id);
	expect_jit(_metadata, jit[1], &e[1], pid, pid,
		   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
	EXPECT_EQ(a.id, rec_sample_id(jit[1])->id);
	records_free(&recs);

	args_init(&args, &e[2], 1);
	ASSERT_EQ(1, jit_prctl(&args));
	ASSERT_EQ(0, ev_drain(&a, &recs));
	ASSERT_EQ(2U, jit_select(&recs, ANY_PID, jit, 3));
	expect_jit(_metadata, jit[0], &e[2], pid, pid, 0);
	expect_jit(_metadata, jit[1], &e[2], pid, pid, 0);
	id0 = rec_sample_id(jit[0])->id;
	id1 = rec_sample_id(jit[1])->id;
	EXPECT_TRUE((id0 == a.id && id1 == b.id) || (id0 == b.id && id1 == a.id))
		TH_LOG("ids %llu and %llu, events %llu and %llu",
		       (unsigned long long)id0, (unsigned long long)id1,
		       (unsigned long long)a.id, (unsigned long long)b.id);
	records_free(&recs);
	ev_close(&b);
	ev_close(&a);
}

/* Bytes of sample_id for @sample_type, as the kernel's id_header_size */
static size_t id_sample_size(__u64 sample_type)
{
	static const __u64 bits[] = {
		PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
		PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER,
	};
	size_t i, size = 0;

	for (i = 0; i < ARRAY_SIZE(bits); i++)
		if (sample_type & bits[i])
			size += 8;
	return size;
}

/* The sample_id at the end of @hdr, field by field, for @sample_type. */
static void expect_id_sample(struct __test_metadata *_metadata,
			     const struct perf_event_header *hdr,
			     __u64 sample_type, __u64 id, pid_t pid, int cpu,
			     __u64 t0, __u64 t1)
{
	const __u64 *p = (const void *)((const char *)hdr + hdr->size -
					id_sample_size(sample_type));
	const __u32 *half;

	if (sample_type & PERF_SAMPLE_TID) {
		half = (const void *)p++;
		EXPECT_EQ((__u32)pid, half[0]);
		EXPECT_EQ((__u32)pid, half[1]);
	}
	if (sample_type & PERF_SAMPLE_TIME) {
		EXPECT_LE(t0, *p);
		EXPECT_GE(t1, *p);
		p++;
	}
	if (sample_type & PERF_SAMPLE_ID)
		EXPECT_EQ(id, *p++);
	if (sample_type & PERF_SAMPLE_STREAM_ID)
		p++;
	if (sample_type & PERF_SAMPLE_CPU) {
		half = (const void *)p++;
		EXPECT_EQ((__u32)cpu, half[0]);
		EXPECT_EQ(0U, half[1]);
	}
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		EXPECT_EQ(id, *p++);
}

/*
 * Listeners with different record layouts (sample_type, sample_id_all)
 * receive the same call each in its own: header.size and sample_id right
 * for every one of them, whatever the others are.
 */
TEST_F(jit_code, mixed_layouts)
{
	static const struct {
		__u64	sample_type;
		bool	sample_id_all;
	} layouts[] = {
		{ SAMPLE_TYPE | PERF_SAMPLE_IDENTIFIER, true },
		{ PERF_SAMPLE_TIME, true },
		{ SAMPLE_TYPE, false },
		{ SAMPLE_TYPE | PERF_SAMPLE_IDENTIFIER, true },
	};
	const struct perf_event_header *jit[5];
	struct perf_jit_code_entry e[4];
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct records recs = {};
	int cpu = self->cpus[0];
	pid_t pid = getpid();
	struct ev ev[4];
	__u64 t0, t1, t2, t3;
	unsigned int i, j;
	size_t id_size;
	int ret;

	ASSERT_EQ(0, pin_to_cpu(cpu));
	for (i = 0; i < ARRAY_SIZE(layouts); i++) {
		attr_init(&attr, true);
		attr.sample_type = layouts[i].sample_type;
		attr.sample_id_all = layouts[i].sample_id_all;
		attr.use_clockid = 1;
		attr.clockid = CLOCK_MONOTONIC;
		ret = ev_open(&ev[i], &attr, 0, -1, DATA_PAGES);
		if (!i && perf_unavailable(ret))
			SKIP(return, "perf_event_open: %s", strerror(-ret));
		ASSERT_EQ(0, ret);
	}

	entry_load(&e[0], CODE_BASE, 0x100, 1, "jit_layouts");
	entry_move(&e[1], CODE_BASE, 0x100, MOVE_BASE, 1);
	entry_unload(&e[2], MOVE_BASE, 0x100, 1);
	entry_flush(&e[3], CODE_BASE, 0x1000, 2);
	args_init(&args, e, 4);
	t0 = clock_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(4, jit_prctl(&args));
	t1 = clock_ns(CLOCK_MONOTONIC);
	for (i = 0; i < ARRAY_SIZE(layouts); i++) {
		args_init(&args, &e[0], 1);
		ASSERT_EQ(1, jit_ioctl(ev[i].fd, &args));
	}
	t2 = clock_ns(CLOCK_MONOTONIC);

	for (i = 0; i < ARRAY_SIZE(layouts); i++) {
		id_size = layouts[i].sample_id_all ?
			  id_sample_size(layouts[i].sample_type) : 0;
		ASSERT_EQ(0, ev_drain(&ev[i], &recs));
		ASSERT_EQ(5U, recs.nr) TH_LOG("listener %u", i);
		for (j = 0; j < 5; j++) {
			const struct perf_jit_code_entry *want = &e[j % 4];
			__u32 flags = j < 4 ? 0 : PERF_JIT_CODE_FLAGS_SYNTHESIZED;
			size_t size = sizeof(struct jit_record) + id_size;

			jit[j] = recs.rec[j];
			if (want->op == PERF_JIT_CODE_LOAD)
				size += ALIGN8(strlen("jit_layouts") + 1);
			EXPECT_EQ(size, jit[j]->size)
				TH_LOG("listener %u, record %u", i, j);
			expect_jit_layout(_metadata, jit[j], want, pid, pid,
					  flags, id_size);
			if (!layouts[i].sample_id_all)
				continue;
			t3 = j < 4 ? t0 : t1;
			expect_id_sample(_metadata, jit[j],
					 layouts[i].sample_type, ev[i].id, pid,
					 cpu, t3, j < 4 ? t1 : t2);
		}
		records_free(&recs);
	}
	for (i = 0; i < ARRAY_SIZE(layouts); i++)
		ev_close(&ev[i]);
}

/*
 * Overwrite buffers (mapped read-only), written forward or backward, never
 * lack room: there the ioctl stops after about one buffer's worth of
 * records per call, returns that short count and never EAGAIN. What it
 * wrote parses, newest records last (forward) or first (backward).
 */
FIXTURE(overwrite)
{
	struct ev ev;
	struct perf_jit_code_entry *e;
};

FIXTURE_VARIANT(overwrite)
{
	bool backward;
};

FIXTURE_VARIANT_ADD(overwrite, forward)
{
	.backward = false,
};

FIXTURE_VARIANT_ADD(overwrite, backward)
{
	.backward = true,
};

FIXTURE_SETUP(overwrite)
{
	struct perf_event_attr attr;
	unsigned int i;
	int ret;

	self->ev.fd = -1;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	self->e = calloc(PERF_JIT_CODE_MAX_ENTRIES, sizeof(*self->e));
	ASSERT_TRUE(!!self->e);
	for (i = 0; i < PERF_JIT_CODE_MAX_ENTRIES; i++)
		entry_unload(&self->e[i], CODE_BASE + i * 0x100ULL, 0x100, i);

	attr_init(&attr, true);
	attr.write_backward = variant->backward;
	ret = ev_open_prot(&self->ev, &attr, 0, -1, 1, PROT_READ);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(overwrite)
{
	ev_close(&self->ev);
	free(self->e);
}

TEST_F(overwrite, one_buffer_per_call)
{
	const __u32 nr = PERF_JIT_CODE_MAX_ENTRIES;
	const __u64 size = JIT_RECORD_MIN;	/* every record's */
	__u64 data_size = self->ev.data_size;
	struct perf_jit_code_args args;
	__u64 rec[JIT_RECORD_MIN / 8];
	__u32 off = 0, call, k, seen = 0;
	const char *why;
	__u64 head, pos;
	int ret;

	for (call = 0; call < 4; call++) {
		args_init(&args, &self->e[off], nr - off);
		ret = jit_ioctl(self->ev.fd, &args);
		ASSERT_LE(1, ret) TH_LOG("call %u", call);
		EXPECT_GT(nr - off, (__u32)ret);
		/* About one buffer's worth, not up to the per-call cap */
		EXPECT_GE(2 * data_size + 8 * size, ret * size);
		off += ret;
	}

	/* Nothing but these records: head is where they end. */
	head = ev_head(&self->ev);
	if (!variant->backward) {
		EXPECT_EQ(off * size, head);
		/* The oldest whole record still in the buffer, to the newest */
		k = head > data_size ? (head - data_size + size - 1) / size : 0;
		for (; (k + 1) * size <= head; k++, seen++) {
			rb_copy(&self->ev, k * size, rec, size);
			why = jit_problem((void *)rec, &self->e[k], getpid(),
					  getpid(), PERF_JIT_CODE_FLAGS_SYNTHESIZED,
					  self->ev.id);
			ASSERT_TRUE(!why) TH_LOG("record %u: %s", k, why);
		}
	} else {
		EXPECT_EQ(0 - off * size, head);
		/* From the newest record at head back to the oldest whole one */
		for (k = 0; k < off && (k + 1) * size <= data_size;
		     k++, seen++) {
			pos = head + k * size;
			rb_copy(&self->ev, pos, rec, size);
			why = jit_problem((void *)rec, &self->e[off - 1 - k],
					  getpid(), getpid(),
					  PERF_JIT_CODE_FLAGS_SYNTHESIZED,
					  self->ev.id);
			ASSERT_TRUE(!why) TH_LOG("record %u: %s", k, why);
		}
	}
	EXPECT_LT(0U, seen);
}

/*
 * A replay larger than the buffer: the ioctl stops before the first record
 * that does not fit (EAGAIN when that is the first one) and loses nothing,
 * so calling again from where it stopped, after draining, gets every entry
 * there exactly once, in order, with no LOST record. Only these records
 * are written to the buffer, so what fits is known to the byte: the data
 * area less one byte, the ring buffer's own rule.
 */
FIXTURE(replay)
{
	struct ev ev;
	struct perf_jit_code_entry *e;
	char *names;
	pid_t sleeper;
	int release;
	pid_t described;
};

FIXTURE_VARIANT(replay)
{
	bool		long_names;
	enum ioctl_on	target;
	enum ev_cpu	cpu;
};

FIXTURE_VARIANT_ADD(replay, fixed_size)
{
	.target = ON_SELF,
	.cpu = ANY_CPU,
};

FIXTURE_VARIANT_ADD(replay, long_names)
{
	.long_names = true,
	.target = ON_SELF,
	.cpu = ANY_CPU,
};

FIXTURE_VARIANT_ADD(replay, this_cpu)
{
	.long_names = true,
	.target = ON_SELF,
	.cpu = THIS_CPU,
};

FIXTURE_VARIANT_ADD(replay, other_task_other_cpu)
{
	.long_names = true,
	.target = ON_OTHER_TASK,
	.cpu = OTHER_CPU,
};

/* @nr names of the lengths @len gives, "%04u_" then filler, in @buf */
static char *make_names(__u32 nr, size_t (*len)(__u32 i))
{
	char *buf = malloc((size_t)nr * PERF_JIT_CODE_NAME_MAX);
	char *name;
	__u32 i;

	if (!buf)
		return NULL;
	for (i = 0; i < nr; i++) {
		name = buf + (size_t)i * PERF_JIT_CODE_NAME_MAX;
		memset(name, 'a' + i % 26, len(i));
		name[len(i)] = '\0';
		memcpy(name, "0000_", 5);
		name[0] += i / 1000 % 10;
		name[1] += i / 100 % 10;
		name[2] += i / 10 % 10;
		name[3] += i % 10;
	}
	return buf;
}

static size_t replay_name_len(__u32 i)
{
	return 100 + i * 131 % 900;
}

FIXTURE_SETUP(replay)
{
	const __u32 nr = PERF_JIT_CODE_MAX_ENTRIES;
	struct perf_event_attr attr;
	int cpus[2], n, cpu = -1, ret;
	pid_t pid = 0;
	__u32 i;

	self->ev.fd = -1;
	self->sleeper = -1;
	self->release = -1;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	n = allowed_cpus(cpus, 2);
	ASSERT_GE(n, 1);
	if (variant->cpu == OTHER_CPU && n < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pin_to_cpu(cpus[0]));
	if (variant->cpu != ANY_CPU)
		cpu = cpus[variant->cpu == OTHER_CPU];

	self->e = calloc(nr, sizeof(*self->e));
	ASSERT_TRUE(!!self->e);
	self->names = NULL;
	if (variant->long_names) {
		self->names = make_names(nr, replay_name_len);
		ASSERT_TRUE(!!self->names);
	}
	for (i = 0; i < nr; i++) {
		if (variant->long_names)
			entry_load(&self->e[i], CODE_BASE + i * 0x1000ULL,
				   0x1000, i, self->names +
				   (size_t)i * PERF_JIT_CODE_NAME_MAX);
		else
			entry_unload(&self->e[i], CODE_BASE + i * 0x1000ULL,
				     0x1000, i);
	}

	self->described = getpid();
	if (variant->target == ON_OTHER_TASK) {
		self->sleeper = spawn_sleeper(&self->release);
		ASSERT_GT(self->sleeper, 0);
		pid = self->sleeper;
	}
	attr_init(&attr, true);
	ret = ev_open(&self->ev, &attr, pid, cpu, REPLAY_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(replay)
{
	ev_close(&self->ev);
	if (self->release >= 0)
		close(self->release);
	if (self->sleeper > 0)
		wait_exit(self->sleeper);
	free(self->names);
	free(self->e);
}

/* How many records from entry @off on fit in @room bytes */
static int replay_fit(const struct perf_jit_code_entry *e, __u32 off,
		      __u32 nr, __u64 room)
{
	__u64 used = 0;
	__u32 i;

	for (i = off; i < nr; i++) {
		used += jit_record_size(&e[i]);
		if (used > room)
			break;
	}
	return i - off;
}

/* Drain and check: the replayed records of @e from *@next on, nothing else */
static void replay_drain(struct __test_metadata *_metadata, struct ev *ev,
			 const struct perf_jit_code_entry *e, pid_t pid,
			 __u32 *next)
{
	struct records recs = {};
	const char *why;
	unsigned int i;

	ASSERT_EQ(0, ev_drain(ev, &recs));
	for (i = 0; i < recs.nr; i++, (*next)++) {
		ASSERT_GT(PERF_JIT_CODE_MAX_ENTRIES, *next)
			TH_LOG("more records than entries");
		why = jit_problem(recs.rec[i], &e[*next], pid, pid,
				  PERF_JIT_CODE_FLAGS_SYNTHESIZED, ev->id);
		ASSERT_TRUE(!why) TH_LOG("record %u: %s", *next, why);
	}
	records_free(&recs);
}

TEST_F(replay, all_once_in_order)
{
	const __u32 nr = PERF_JIT_CODE_MAX_ENTRIES;
	__u64 room = self->ev.data_size - 1, used = 0;
	/*
	 * A call also stops after about 64 KiB: only a buffer well below
	 * that (4 KiB pages) makes the room the only limit.
	 */
	bool exact = room < 32768;
	struct perf_jit_code_args args;
	__u32 off, next = 0, calls, i;
	int ret, fit;

	/* Into the empty buffer: as many whole records as fit. */
	args_init(&args, self->e, nr);
	ret = jit_ioctl(self->ev.fd, &args);
	fit = replay_fit(self->e, 0, nr, room);
	ASSERT_LE(1, ret);
	ASSERT_GE(fit, ret);
	if (exact)
		ASSERT_EQ(fit, ret);
	for (i = 0; i < (__u32)ret; i++)
		used += jit_record_size(&self->e[i]);
	off = ret;

	/* Not drained: what still fits, or EAGAIN if not even one record */
	if (exact) {
		args_init(&args, &self->e[off], nr - off);
		fit = replay_fit(self->e, off, nr, room - used);
		ret = jit_ioctl(self->ev.fd, &args);
		EXPECT_EQ(fit ? fit : -EAGAIN, ret);
		if (ret > 0)
			off += ret;
	}

	for (calls = 0; off < nr && calls < nr; calls++) {
		replay_drain(_metadata, &self->ev, self->e, self->described,
			     &next);
		ASSERT_EQ(off, next);
		args_init(&args, &self->e[off], nr - off);
		ret = jit_ioctl(self->ev.fd, &args);
		fit = replay_fit(self->e, off, nr, room);
		ASSERT_LE(1, ret) TH_LOG("from entry %u", off);
		ASSERT_GE(fit, ret) TH_LOG("from entry %u", off);
		if (exact)
			ASSERT_EQ(fit, ret) TH_LOG("from entry %u", off);
		off += ret;
	}
	replay_drain(_metadata, &self->ev, self->e, self->described, &next);
	EXPECT_EQ(nr, off);
	EXPECT_EQ(nr, next);
}

/*
 * A full buffer loses prctl records the usual way: the caller's entries
 * are consumed, and a PERF_RECORD_LOST ahead of the next record that fits
 * accounts for every record that did not, with that record's sample_id.
 */
TEST_F(jit_code, prctl_ring_full)
{
	const __u32 nr = PERF_JIT_CODE_MAX_ENTRIES;
	const struct perf_event_header **jit;
	const struct lost_record *lost;
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct perf_jit_code_entry *e;
	struct records recs = {};
	struct ev ev;
	__u32 i, n;
	int ret;

	attr_init(&attr, true);
	ret = ev_open(&ev, &attr, 0, -1, 1);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	e = calloc(nr + 1, sizeof(*e));
	jit = calloc(nr + 1, sizeof(*jit));
	ASSERT_TRUE(e && jit);
	for (i = 0; i <= nr; i++)
		entry_unload(&e[i], CODE_BASE + i * 0x100ULL, 0x100, i);

	/* Lost records are not the caller's error. */
	args_init(&args, e, nr);
	ASSERT_EQ((int)nr, jit_call_all(-1, &args));
	ASSERT_EQ(0, ev_drain(&ev, &recs));
	n = jit_select(&recs, ANY_PID, jit, nr + 1);
	EXPECT_EQ(n, recs.nr);
	EXPECT_EQ((ev.data_size - 1) / JIT_RECORD_MIN, n);
	ASSERT_LT(n, nr);
	for (i = 0; i < n; i++)
		EXPECT_EQ((__u64)i, ((const struct jit_record *)jit[i])->code_index);
	records_free(&recs);

	/* With room again, the loss is reported ahead of the next record. */
	args_init(&args, &e[nr], 1);
	ASSERT_EQ(1, jit_prctl(&args));
	ASSERT_EQ(0, ev_drain(&ev, &recs));
	ASSERT_EQ(2U, recs.nr);
	lost = (const void *)recs.rec[0];
	ASSERT_EQ((__u32)PERF_RECORD_LOST, lost->header.type);
	ASSERT_EQ(LOST_RECORD_SIZE, lost->header.size);
	EXPECT_EQ(ev.id, lost->id);
	EXPECT_EQ((__u64)(nr - n), lost->lost);
	expect_jit(_metadata, recs.rec[1], &e[nr], getpid(), getpid(), 0);
	EXPECT_EQ((__u32)getpid(), rec_sample_id(&lost->header)->pid);
	EXPECT_EQ(0, memcmp(rec_sample_id(&lost->header),
			    rec_sample_id(recs.rec[1]),
			    sizeof(struct sample_id)));

	records_free(&recs);
	free(jit);
	free(e);
	ev_close(&ev);
}

/*
 * Writers racing into one buffer for about a second: a child that calls
 * the prctl in a loop, and the parent, on another CPU when there is one,
 * replaying into the same buffer with the ioctl while it drains. Every
 * record parses (ev_drain() stops at a torn header) and is right, the
 * ioctl's records arrive all and in order, the child's in order, and the
 * counts add up: the child's records and the losses that LOST records
 * report are what its calls consumed, and the ioctl's records what its
 * calls wrote.
 */
#define RACE_BATCH	8
#define RACE_IOCTL_BASE	0x10000000000ULL	/* the ioctl's code_index */

static const char * const race_names[] = {
	"r", "race_1", "race_name_2", "race_name_number_3",
	"race_a_somewhat_longer_name_4", "race_5_padded_to_eight_",
	"race_6_name_that_takes_more_than_sixty_four_bytes_of_the_record_x",
	"race_7",
};

/* The entry with code_index @k, for the child and the parent alike */
static void race_entry(struct perf_jit_code_entry *e, __u64 k)
{
	__u64 slot = (k % 4096) * 0x100;

	switch (k % 4) {
	case 0:
		entry_load(e, CODE_BASE + slot, 0x100, k,
			   race_names[(k / 4) % ARRAY_SIZE(race_names)]);
		break;
	case 1:
		entry_move(e, CODE_BASE + slot, 0x100, MOVE_BASE + slot, k);
		break;
	case 2:
		entry_unload(e, MOVE_BASE + slot, 0x100, k);
		break;
	default:
		entry_flush(e, CODE_BASE + slot, 0x100, k);
		break;
	}
}

struct race_shared {
	int	go;
	int	stop;
	int	err;		/* the child's first bad return value */
	__u64	emitted;	/* entries its prctl calls consumed */
};

struct race_count {
	pid_t		pid;		/* the child */
	__u64		id;
	__u64		prctl;		/* records of its prctl calls */
	__u64		next_prctl;	/* lowest code_index the next may have */
	__u64		ioctl;		/* records of the ioctl */
	__u64		written;	/* entries the ioctl calls wrote */
	__u64		lost;
	unsigned int	bad;
};

enum race_event {
	RACE_TASK,		/* per-task, cpu == -1 */
	RACE_TASK_ON_CPU,	/* per-task, on the child's CPU */
	RACE_CPU_WIDE,		/* CPU-wide, on the child's CPU */
};

FIXTURE(race)
{
	struct ev ev;
	struct race_shared *sh;
	pid_t child;
	int done[2];	/* the child writes a byte when it has stopped */
	int cpus[2];
	int nr_cpus;
};

FIXTURE_VARIANT(race)
{
	enum race_event event;
};

FIXTURE_VARIANT_ADD(race, task_other_cpu)
{
	.event = RACE_TASK,
};

FIXTURE_VARIANT_ADD(race, task_on_cpu)
{
	.event = RACE_TASK_ON_CPU,
};

FIXTURE_VARIANT_ADD(race, cpu_wide)
{
	.event = RACE_CPU_WIDE,
};

FIXTURE_SETUP(race)
{
	self->ev.fd = -1;
	self->child = -1;
	self->sh = MAP_FAILED;
	self->done[0] = -1;
	self->done[1] = -1;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	self->nr_cpus = allowed_cpus(self->cpus, 2);
	ASSERT_GE(self->nr_cpus, 1);
	if (variant->event == RACE_TASK && self->nr_cpus < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pin_to_cpu(self->cpus[0]));
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(self->sh != MAP_FAILED);
	ASSERT_EQ(0, pipe(self->done));
}

FIXTURE_TEARDOWN(race)
{
	kill_child(&self->child);
	ev_close(&self->ev);
	if (self->sh != MAP_FAILED)
		munmap(self->sh, sizeof(*self->sh));
	if (self->done[0] >= 0)
		close(self->done[0]);
	if (self->done[1] >= 0)
		close(self->done[1]);
}

static void race_child(struct race_shared *sh, int cpu, pid_t parent,
		       int done)
{
	struct perf_jit_code_entry e[RACE_BATCH];
	struct perf_jit_code_args args;
	__u64 k = 0;
	int i, ret;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(1);
	if (pin_to_cpu(cpu))
		sh->err = -errno;
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
		sched_yield();
	while (!sh->err && !__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < RACE_BATCH; i++)
			race_entry(&e[i], k + i);
		args_init(&args, e, RACE_BATCH);
		ret = jit_prctl(&args);
		if (ret < 1 || ret > RACE_BATCH)
			sh->err = ret ? ret : -ERANGE;
		else
			k += ret;
	}
	sh->emitted = k;
	if (write(done, "", 1) != 1)
		_exit(1);
	/* Alive until the parent is done: the ioctl needs its task. */
	for (;;)
		pause();
}

static const char *race_check(struct race_count *c,
			      const struct perf_event_header *hdr)
{
	const struct jit_record *rec = (const void *)hdr;
	const struct lost_record *lost = (const void *)hdr;
	struct perf_jit_code_entry e;
	__u64 k;

	if (hdr->type == PERF_RECORD_LOST) {
		if (hdr->size != LOST_RECORD_SIZE)
			return "LOST record size";
		if (lost->id != c->id)
			return "LOST record id";
		c->lost += lost->lost;
		return NULL;
	}
	if (hdr->type != PERF_RECORD_JIT_CODE)
		return "unexpected record type";
	if (hdr->size < JIT_RECORD_MIN)
		return "JIT_CODE record too short";
	k = rec->code_index;
	if (rec->flags == PERF_JIT_CODE_FLAGS_SYNTHESIZED) {
		if (k != RACE_IOCTL_BASE + c->ioctl)
			return "ioctl record missing or out of order";
		c->ioctl++;
	} else {
		if (k < c->next_prctl || k >= RACE_IOCTL_BASE)
			return "prctl record out of order";
		c->next_prctl = k + 1;
		c->prctl++;
	}
	race_entry(&e, k);
	return jit_problem(hdr, &e, c->pid, c->pid, rec->flags, c->id);
}

static void race_drain(struct __test_metadata *_metadata, struct ev *ev,
		       struct race_count *c)
{
	struct records recs = {};
	const char *why;
	unsigned int i;
	int ret;

	ret = ev_drain(ev, &recs);
	if (ret) {
		TH_LOG("draining: %s", strerror(-ret));
		c->bad++;
	}
	for (i = 0; i < recs.nr; i++) {
		why = race_check(c, recs.rec[i]);
		if (why && c->bad++ < 5)
			TH_LOG("record type %u size %u: %s", recs.rec[i]->type,
			       recs.rec[i]->size, why);
	}
	records_free(&recs);
}

/* Replay @n entries about the child; the ioctl's return value */
static int race_ioctl(struct ev *ev, struct race_count *c, __u32 n)
{
	struct perf_jit_code_entry e[RACE_BATCH];
	struct perf_jit_code_args args;
	__u32 i;
	int ret;

	for (i = 0; i < n; i++)
		race_entry(&e[i], RACE_IOCTL_BASE + c->written + i);
	args_init(&args, e, n);
	args.pid = c->pid;
	ret = jit_ioctl(ev->fd, &args);
	if (ret > (int)n)
		return -ERANGE;
	if (ret > 0)
		c->written += ret;
	return ret;
}

TEST_F_TIMEOUT(race, accounting, 60)
{
	int child_cpu = self->cpus[self->nr_cpus - 1];
	struct perf_event_attr attr;
	struct race_count c = {};
	pid_t parent = getpid();
	__u64 start;
	char stopped;
	int ret;

	self->child = fork();
	ASSERT_GE(self->child, 0);
	if (self->child == 0) {
		close(self->done[0]);
		race_child(self->sh, child_cpu, parent, self->done[1]);
	}
	close(self->done[1]);
	self->done[1] = -1;

	attr_init(&attr, true);
	if (variant->event == RACE_CPU_WIDE)
		ret = ev_open(&self->ev, &attr, -1, child_cpu, DATA_PAGES);
	else
		ret = ev_open(&self->ev, &attr, self->child,
			      variant->event == RACE_TASK ? -1 : child_cpu,
			      DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
	c.pid = self->child;
	c.id = self->ev.id;

	__atomic_store_n(&self->sh->go, 1, __ATOMIC_RELEASE);
	start = clock_ns(CLOCK_MONOTONIC);
	while (!c.bad && clock_ns(CLOCK_MONOTONIC) - start < NSEC_PER_SEC) {
		ret = race_ioctl(&self->ev, &c, RACE_BATCH);
		if (ret < 0 && ret != -EAGAIN) {
			TH_LOG("ioctl: %s", strerror(-ret));
			c.bad++;
		}
		race_drain(_metadata, &self->ev, &c);
	}
	__atomic_store_n(&self->sh->stop, 1, __ATOMIC_RELEASE);
	/* Its byte, once it has stopped; end of file if it died. */
	ASSERT_EQ(1, read(self->done[0], &stopped, 1))
		TH_LOG("waiting for the child to stop: it died");
	EXPECT_EQ(0, self->sh->err);
	race_drain(_metadata, &self->ev, &c);

	/* Losses are reported ahead of the next record: write one. */
	EXPECT_EQ(1, race_ioctl(&self->ev, &c, 1));
	race_drain(_metadata, &self->ev, &c);

	EXPECT_EQ(0U, c.bad);
	EXPECT_LT(0ULL, self->sh->emitted);
	EXPECT_LT(1ULL, c.written);
	EXPECT_EQ(self->sh->emitted, c.prctl + c.lost);
	EXPECT_EQ(c.written, c.ioctl);
	TH_LOG("prctl: %llu entries, %llu records, %llu lost; ioctl: %llu",
	       (unsigned long long)self->sh->emitted,
	       (unsigned long long)c.prctl, (unsigned long long)c.lost,
	       (unsigned long long)c.ioctl);
}

/*
 * A name that changes while the kernel reads it: a thread flips its first
 * byte between 'x' and NUL and its length between 7, 20 and 63 while the
 * main thread calls the prctl. The kernel reads each name once, so every
 * LOAD delivered has the name as it was read: not empty, terminated,
 * zero-padded. A call returns a count, or EINVAL when its first name was
 * read empty; every entry it counts is delivered.
 */
struct flipper {
	char	name[64];
	int	stop;
};

static void *flip_name(void *p)
{
	struct flipper *f = p;
	unsigned int i;

	for (i = 0; !__atomic_load_n(&f->stop, __ATOMIC_RELAXED); i++) {
		__atomic_store_n(&f->name[0], i & 1 ? 'x' : '\0',
				 __ATOMIC_RELAXED);
		__atomic_store_n(&f->name[7], i & 2 ? 'a' : '\0',
				 __ATOMIC_RELAXED);
		__atomic_store_n(&f->name[20], i & 4 ? 'a' : '\0',
				 __ATOMIC_RELAXED);
	}
	return NULL;
}

/* A LOAD of a name the flipper can leave, or what is wrong with it */
static const char *flipped_problem(const struct perf_event_header *hdr)
{
	const struct jit_record *rec = (const void *)hdr;
	size_t room, len, i;

	if (hdr->type != PERF_RECORD_JIT_CODE || hdr->size < JIT_RECORD_MIN ||
	    rec->op != PERF_JIT_CODE_LOAD)
		return "not a LOAD record";
	room = hdr->size - JIT_RECORD_MIN;
	len = strnlen(rec->name, room);
	if (len == room)
		return "name not NUL-terminated";
	if (!len)
		return "empty name";
	if (room != ALIGN8(len + 1))
		return "name not padded to 8 bytes exactly";
	for (i = len; i < room; i++)
		if (rec->name[i])
			return "name padding is not zero";
	if (rec->name[0] != 'x')
		return "name does not start with x";
	for (i = 1; i < len; i++)
		if (rec->name[i] != 'a')
			return "a byte of the name the flipper never wrote";
	return NULL;
}

TEST_F_TIMEOUT(jit_code, name_changes, 60)
{
	struct perf_jit_code_entry e[RACE_BATCH];
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct flipper f = {};
	__u64 start, consumed = 0, delivered = 0, einval = 0, calls;
	struct records recs = {};
	unsigned int i, bad = 0;
	pthread_t thread;
	const char *why;
	struct ev ev;
	int ret;

	attr_init(&attr, true);
	ret = ev_open(&ev, &attr, 0, -1, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	memset(f.name, 'a', sizeof(f.name) - 1);
	f.name[0] = 'x';
	for (i = 0; i < RACE_BATCH; i++)
		entry_load(&e[i], CODE_BASE + i * 0x100, 0x100, i, f.name);
	args_init(&args, e, RACE_BATCH);
	ASSERT_EQ(0, pthread_create(&thread, NULL, flip_name, &f));

	start = clock_ns(CLOCK_MONOTONIC);
	for (calls = 0; calls < 1000000 && !bad &&
	     clock_ns(CLOCK_MONOTONIC) - start < NSEC_PER_SEC; calls++) {
		ret = jit_prctl(&args);
		if (ret == -EINVAL) {
			einval++;
		} else if (ret >= 1 && ret <= RACE_BATCH) {
			consumed += ret;
		} else {
			TH_LOG("prctl returned %d", ret);
			bad++;
		}
		if (ev_drain(&ev, &recs)) {
			TH_LOG("malformed record");
			bad++;
		}
		for (i = 0; i < recs.nr; i++, delivered++) {
			why = flipped_problem(recs.rec[i]);
			if (why && bad++ < 5)
				TH_LOG("record %llu: %s",
				       (unsigned long long)delivered, why);
		}
		records_free(&recs);
	}
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELAXED);
	ASSERT_EQ(0, pthread_join(thread, NULL));

	EXPECT_EQ(0U, bad);
	EXPECT_EQ(consumed, delivered);
	EXPECT_LT(0ULL, delivered);
	TH_LOG("%llu calls, %llu records, %llu EINVAL",
	       (unsigned long long)calls, (unsigned long long)delivered,
	       (unsigned long long)einval);
	ev_close(&ev);
}

/*
 * The largest replay, 1024 entries with names of the maximum length, into
 * a buffer drained between calls, through either call: every call gets
 * through a part (the per-call byte limit ends the first one well before
 * the end), nothing is lost, and all of it arrives in order. The harness
 * that runs the test checks the kernel log afterwards (soft lockups, RCU
 * stalls, sleeping in atomic context).
 */
FIXTURE(stress)
{
	struct ev ev;
	struct perf_jit_code_entry *e;
	char *names;
};

FIXTURE_VARIANT(stress)
{
	bool ioctl;
};

FIXTURE_VARIANT_ADD(stress, prctl)
{
	.ioctl = false,
};

FIXTURE_VARIANT_ADD(stress, ioctl)
{
	.ioctl = true,
};

static size_t max_name_len(__u32 i)
{
	return PERF_JIT_CODE_NAME_MAX - 1;
}

FIXTURE_SETUP(stress)
{
	const __u32 nr = PERF_JIT_CODE_MAX_ENTRIES;
	struct perf_event_attr attr;
	int cpus[1], ret;
	__u32 i;

	self->ev.fd = -1;
	self->e = NULL;
	self->names = NULL;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	/* The prctl's records reach a cpu == -1 event wherever we run. */
	ASSERT_EQ(1, allowed_cpus(cpus, 1));
	ASSERT_EQ(0, pin_to_cpu(cpus[0]));
	self->e = calloc(nr, sizeof(*self->e));
	self->names = make_names(nr, max_name_len);
	ASSERT_TRUE(self->e && self->names);
	for (i = 0; i < nr; i++)
		entry_load(&self->e[i], CODE_BASE + i * 0x1000ULL, 0x1000, i,
			   self->names + (size_t)i * PERF_JIT_CODE_NAME_MAX);

	attr_init(&attr, true);
	ret = ev_open(&self->ev, &attr, 0, -1, BATCH_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(stress)
{
	ev_close(&self->ev);
	free(self->names);
	free(self->e);
}

TEST_F_TIMEOUT(stress, max_names, 90)
{
	const __u32 nr = PERF_JIT_CODE_MAX_ENTRIES;
	const size_t size = JIT_RECORD_MIN + PERF_JIT_CODE_NAME_MAX;
	__u32 flags = variant->ioctl ? PERF_JIT_CODE_FLAGS_SYNTHESIZED : 0;
	struct perf_jit_code_args args;
	struct records recs = {};
	__u32 off = 0, next = 0, calls, i;
	const char *why;
	int ret;

	ASSERT_GE(self->ev.data_size - 1, (__u64)CALL_BYTES_MAX);
	for (calls = 0; off < nr && calls < nr; calls++) {
		args_init(&args, &self->e[off], nr - off);
		ret = variant->ioctl ? jit_ioctl(self->ev.fd, &args) :
				       jit_prctl(&args);
		ASSERT_LE(1, ret) TH_LOG("from entry %u", off);
		ASSERT_GE(nr - off, (__u32)ret);
		if (!calls)
			EXPECT_GT(nr, (__u32)ret);
		EXPECT_GE((__u64)CALL_BYTES_MAX, ret * size);
		off += ret;

		ASSERT_EQ(0, ev_drain(&self->ev, &recs));
		for (i = 0; i < recs.nr; i++, next++) {
			ASSERT_GT(nr, next);
			why = jit_problem(recs.rec[i], &self->e[next],
					  getpid(), getpid(), flags,
					  self->ev.id);
			ASSERT_TRUE(!why) TH_LOG("record %u: %s", next, why);
		}
		records_free(&recs);
		ASSERT_EQ(off, next);
	}
	EXPECT_EQ(nr, off);
}

TEST_HARNESS_MAIN
