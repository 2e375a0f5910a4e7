// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for PERF_RECORD_JIT_CODE: the jit_code attr bit, PR_PERF_JIT_CODE
 * and PERF_EVENT_IOC_JIT_CODE.
 *
 * Every event is a software dummy event with sample_id_all set, read back
 * through its mmap()ed ring buffer.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
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

#define SAMPLE_TYPE	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_ID | PERF_SAMPLE_CPU)

#define JIT_OPS_MASK	((1 << PERF_JIT_CODE_LOAD) | \
			 (1 << PERF_JIT_CODE_UNLOAD) | \
			 (1 << PERF_JIT_CODE_MOVE))

#define DATA_PAGES	16
#define BATCH_PAGES	64

/* Made-up code addresses, valid user addresses on every 64-bit arch. */
#define CODE_BASE	0x40000000ULL
#define MOVE_BASE	0x50000000ULL
#define KERNEL_ADDR	0xffff800000000000ULL

#define ANY_PID		((__u32)-1)

#define ALIGN8(x)	(((x) + 7) & ~(size_t)7)

/* PERF_RECORD_JIT_CODE up to name[], as <linux/perf_event.h> documents it */
struct jit_record {
	struct perf_event_header	header;
	__u32				pid, tid;
	__u32				op;
	__u32				flags;
	__u64				addr;
	__u64				len;
	__u64				new_addr;
	__u64				code_index;
	char				name[];
};

struct lost_record {
	struct perf_event_header	header;
	__u64				id;
	__u64				lost;
};

/* sample_id for SAMPLE_TYPE; it ends every record but PERF_RECORD_SAMPLE */
struct sample_id {
	__u32				pid, tid;
	__u64				time;
	__u64				id;
	__u32				cpu, res;
};

#define JIT_RECORD_MIN	(sizeof(struct jit_record) + sizeof(struct sample_id))

struct ev {
	int				fd;
	__u64				id;
	void				*map;
	size_t				map_len;
	struct perf_event_mmap_page	*page;
	unsigned char			*data;
	__u64				data_size;
};

/* Records copied out of a ring buffer, in ring order. */
struct records {
	struct perf_event_header	**rec;
	unsigned int			nr;
	unsigned int			alloc;
};

static long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

static pid_t sys_gettid(void)
{
	return syscall(__NR_gettid);
}

static bool jit_code_supported(void)
{
	return prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 0UL, 0UL) >= 0;
}

/* perf_event_open() errors that mean "not allowed here" */
static bool perf_unavailable(int err)
{
	return err == -EACCES || err == -EPERM;
}

static void attr_init(struct perf_event_attr *attr, bool jit_code)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = PERF_TYPE_SOFTWARE;
	attr->size = sizeof(*attr);
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->sample_type = SAMPLE_TYPE;
	attr->sample_id_all = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->jit_code = jit_code;
}

static void ev_close(struct ev *ev)
{
	if (ev->map && ev->map != MAP_FAILED)
		munmap(ev->map, ev->map_len);
	if (ev->fd >= 0)
		close(ev->fd);
	memset(ev, 0, sizeof(*ev));
	ev->fd = -1;
}

/* Open an event and map @data_pages of ring buffer; 0 or -errno. */
static int ev_open(struct ev *ev, struct perf_event_attr *attr, pid_t pid,
		   int cpu, unsigned int data_pages)
{
	long page = page_size();
	int err;

	memset(ev, 0, sizeof(*ev));
	ev->fd = syscall(__NR_perf_event_open, attr, pid, cpu, -1,
			 PERF_FLAG_FD_CLOEXEC);
	if (ev->fd < 0)
		return -errno;

	ev->map_len = (1 + data_pages) * page;
	ev->map = mmap(NULL, ev->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ev->fd, 0);
	if (ev->map == MAP_FAILED)
		goto err;
	if (ioctl(ev->fd, PERF_EVENT_IOC_ID, &ev->id))
		goto err;

	/* data_offset and data_size are zero on kernels before 4.1 */
	ev->page = ev->map;
	ev->data_size = ev->page->data_size;
	if (!ev->data_size)
		ev->data_size = (__u64)data_pages * page;
	ev->data = (unsigned char *)ev->map + ev->page->data_offset;
	if (!ev->page->data_offset)
		ev->data += page;
	return 0;
err:
	err = -errno;
	ev_close(ev);
	return err;
}

static void rb_copy(const struct ev *ev, __u64 pos, void *dst, size_t len)
{
	size_t off = pos & (ev->data_size - 1);
	size_t first = ev->data_size - off;

	if (first > len)
		first = len;
	memcpy(dst, ev->data + off, first);
	memcpy((char *)dst + first, ev->data, len - first);
}

static int records_add(struct records *recs, struct perf_event_header *rec)
{
	if (recs->nr == recs->alloc) {
		unsigned int alloc = recs->alloc ? 2 * recs->alloc : 64;
		void *p = realloc(recs->rec, alloc * sizeof(*recs->rec));

		if (!p)
			return -ENOMEM;
		recs->rec = p;
		recs->alloc = alloc;
	}
	recs->rec[recs->nr++] = rec;
	return 0;
}

static void records_free(struct records *recs)
{
	while (recs->nr)
		free(recs->rec[--recs->nr]);
	free(recs->rec);
	memset(recs, 0, sizeof(*recs));
}

/*
 * Copy every record between data_tail and data_head out of the ring, so
 * that records wrapping around its end come out whole, and hand the space
 * back to the kernel. Returns 0, or -EIO on a malformed header.
 */
static int ev_drain(struct ev *ev, struct records *recs)
{
	__u64 head = __atomic_load_n(&ev->page->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = ev->page->data_tail;

	while (tail != head) {
		struct perf_event_header hdr, *rec;

		if (head - tail < sizeof(hdr))
			return -EIO;
		rb_copy(ev, tail, &hdr, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail ||
		    hdr.size % 8)
			return -EIO;
		rec = malloc(hdr.size);
		if (!rec)
			return -ENOMEM;
		rb_copy(ev, tail, rec, hdr.size);
		if (records_add(recs, rec)) {
			free(rec);
			return -ENOMEM;
		}
		tail += hdr.size;
	}
	__atomic_store_n(&ev->page->data_tail, tail, __ATOMIC_RELEASE);
	return 0;
}

static unsigned int records_count(const struct records *recs, __u32 type)
{
	unsigned int i, n = 0;

	for (i = 0; i < recs->nr; i++)
		n += recs->rec[i]->type == type;
	return n;
}

/* The JIT_CODE records with pid @pid (ANY_PID: all), in ring order. */
static unsigned int jit_select(const struct records *recs, __u32 pid,
			       const struct perf_event_header **out,
			       unsigned int max)
{
	unsigned int i, n = 0;

	for (i = 0; i < recs->nr; i++) {
		const struct jit_record *rec = (const void *)recs->rec[i];

		if (rec->header.type != PERF_RECORD_JIT_CODE ||
		    rec->header.size < JIT_RECORD_MIN)
			continue;
		if (pid != ANY_PID && rec->pid != pid)
			continue;
		if (n < max)
			out[n] = &rec->header;
		n++;
	}
	return n;
}

static const struct sample_id *rec_sample_id(const struct perf_event_header *hdr)
{
	return (const void *)((const char *)hdr + hdr->size -
			      sizeof(struct sample_id));
}

static __u64 rec_time(const struct perf_event_header *hdr)
{
	return rec_sample_id(hdr)->time;
}

/*
 * Check one PERF_RECORD_JIT_CODE against the entry it reports: the fields
 * passed through, those the kernel fills in, and that the name is
 * terminated and zero-padded with nothing else in the record.
 */
static void expect_jit(struct __test_metadata *_metadata,
		       const struct perf_event_header *hdr,
		       const struct perf_jit_code_entry *e,
		       pid_t pid, pid_t tid, __u32 flags)
{
	const struct jit_record *rec = (const void *)hdr;
	size_t room, len, i, dirty = 0;

	ASSERT_EQ((__u32)PERF_RECORD_JIT_CODE, hdr->type);
	ASSERT_GE(hdr->size, JIT_RECORD_MIN);
	EXPECT_EQ(PERF_RECORD_MISC_USER, hdr->misc);
	EXPECT_EQ((__u32)pid, rec->pid);
	EXPECT_EQ((__u32)tid, rec->tid);
	EXPECT_EQ(e->op, rec->op);
	EXPECT_EQ(flags, rec->flags);
	EXPECT_EQ(e->addr, rec->addr);
	EXPECT_EQ(e->len, rec->len);
	EXPECT_EQ(e->new_addr, rec->new_addr);
	EXPECT_EQ(e->code_index, rec->code_index);
	EXPECT_EQ(0U, rec_sample_id(hdr)->res);

	room = hdr->size - JIT_RECORD_MIN;
	if (e->op != PERF_JIT_CODE_LOAD) {
		EXPECT_EQ(0UL, room);
		return;
	}
	len = strnlen(rec->name, room);
	ASSERT_LT(len, room) TH_LOG("name not NUL-terminated");
	EXPECT_EQ(ALIGN8(len + 1), room);
	EXPECT_STREQ((const char *)(uintptr_t)e->name, rec->name);
	for (i = len; i < room; i++)
		dirty += rec->name[i] != 0;
	EXPECT_EQ(0UL, dirty) TH_LOG("name padding is not zero");
}

static void entry_load(struct perf_jit_code_entry *e, __u64 addr, __u64 len,
		       __u64 index, const char *name)
{
	memset(e, 0, sizeof(*e));
	e->op = PERF_JIT_CODE_LOAD;
	e->addr = addr;
	e->len = len;
	e->code_index = index;
	e->name = (uintptr_t)name;
}

static void entry_unload(struct perf_jit_code_entry *e, __u64 addr,
			 __u64 len, __u64 index)
{
	memset(e, 0, sizeof(*e));
	e->op = PERF_JIT_CODE_UNLOAD;
	e->addr = addr;
	e->len = len;
	e->code_index = index;
}

static void entry_move(struct perf_jit_code_entry *e, __u64 addr, __u64 len,
		       __u64 new_addr, __u64 index)
{
	memset(e, 0, sizeof(*e));
	e->op = PERF_JIT_CODE_MOVE;
	e->addr = addr;
	e->len = len;
	e->new_addr = new_addr;
	e->code_index = index;
}

/* One entry of each operation, as most tests emit them. */
static void entries_mixed(struct perf_jit_code_entry e[3], __u64 index,
			  const char *name)
{
	entry_load(&e[0], CODE_BASE, 0x80, index, name);
	entry_move(&e[1], CODE_BASE, 0x80, MOVE_BASE, index);
	entry_unload(&e[2], MOVE_BASE, 0x80, index);
}

static void args_init(struct perf_jit_code_args *args, const void *entries,
		      __u32 nr)
{
	memset(args, 0, sizeof(*args));
	args->size = sizeof(*args);
	args->entries = (uintptr_t)entries;
	args->nr_entries = nr;
	args->entry_size = sizeof(struct perf_jit_code_entry);
}

/* PR_PERF_JIT_CODE: 0 or -errno */
static int jit_prctl(const void *args)
{
	return prctl(PR_PERF_JIT_CODE, (unsigned long)args, 0UL, 0UL, 0UL) ?
	       -errno : 0;
}

/* PERF_EVENT_IOC_JIT_CODE: 0 or -errno */
static int jit_ioctl(int fd, const void *args)
{
	return ioctl(fd, PERF_EVENT_IOC_JIT_CODE, args) ? -errno : 0;
}

static int emit_one(const char *name, __u64 index)
{
	struct perf_jit_code_entry e;
	struct perf_jit_code_args args;

	entry_load(&e, CODE_BASE + index * 0x100, 0x100, index, name);
	args_init(&args, &e, 1);
	return jit_prctl(&args);
}

/* The first @max CPUs this task may run on; returns how many were found. */
static int allowed_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n;
}

static int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Exit status of a child, or -1 if it did not exit normally. */
static int wait_exit(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * A child that blocks until *@release is closed, then exits; it gives the
 * tests a live process other than themselves.
 */
static pid_t spawn_sleeper(int *release)
{
	int pipefd[2];
	pid_t pid;
	char c;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(pipefd[1]);
		while (read(pipefd[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(pipefd[0]);
	if (pid < 0)
		close(pipefd[1]);
	else
		*release = pipefd[1];
	return pid;
}

static __u64 clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
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

	/* Nobody listens: valid input still succeeds. */
	entries_mixed(e, 1, "jit_nobody_listens");
	args_init(&args, e, 3);
	EXPECT_EQ(0, jit_prctl(&args));
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

	ASSERT_EQ(0, prctl(PR_PERF_JIT_CODE, a, 0UL, 0UL, 0UL));
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

	EXPECT_EQ(0, jit_ioctl(jit.fd, &args));
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

/* An event on the calling thread, PR_PERF_JIT_CODE from that thread. */
FIXTURE(task_event)
{
	struct ev ev;
	struct ev listener;	/* with jit_code, when ev has not */
	int cpus[2];
};

FIXTURE_VARIANT(task_event)
{
	bool		jit_code;
	bool		by_tid;		/* pid argument gettid(), not 0 */
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
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	ret = allowed_cpus(self->cpus, 2);
	ASSERT_GE(ret, 1);
	if (variant->cpu == OTHER_CPU && ret < 2)
		SKIP(return, "needs two CPUs");
	if (variant->cpu != ANY_CPU) {
		ASSERT_EQ(0, pin_to_cpu(self->cpus[0]));
		cpu = self->cpus[variant->cpu == OTHER_CPU];
	}

	attr_init(&attr, variant->jit_code);
	attr.comm = 1;
	ret = ev_open(&self->ev, &attr, variant->by_tid ? sys_gettid() : 0,
		      cpu, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);

	/*
	 * Without the bit, a second event that has it makes the kernel emit
	 * the records: the first must still get none of them.
	 */
	self->listener.fd = -1;
	if (!variant->jit_code) {
		attr_init(&attr, true);
		ASSERT_EQ(0, ev_open(&self->listener, &attr, 0, -1, DATA_PAGES));
	}
}

FIXTURE_TEARDOWN(task_event)
{
	ev_close(&self->ev);
	if (self->listener.fd >= 0)
		ev_close(&self->listener);
}

TEST_F(task_event, delivery)
{
	const struct perf_event_header *jit[5];
	struct perf_jit_code_entry e[4];
	struct perf_jit_code_args args;
	struct records recs = {};
	pid_t pid = getpid();
	unsigned int i, comm;
	__u64 last_time;

	entries_mixed(e, 10, "jit_task_event");
	entry_load(&e[3], CODE_BASE + 0x1000, 0x20, 11, "jit_single");

	/* A COMM record first, both to order against and to show life. */
	ASSERT_EQ(0, prctl(PR_SET_NAME, "jit_code_test"));
	args_init(&args, e, 3);
	ASSERT_EQ(0, jit_prctl(&args));
	args_init(&args, &e[3], 1);
	ASSERT_EQ(0, jit_prctl(&args));
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
		ASSERT_EQ(0, jit_prctl(&args));
		ASSERT_EQ(0, ev_drain(&self->ev, &recs));
		ASSERT_EQ(1U, jit_select(&recs, ANY_PID, jit, 5));
		expect_jit(_metadata, jit[0], &e[3], pid, pid, 0);
		EXPECT_EQ((__u32)self->cpus[1], rec_sample_id(jit[0])->cpu);
		goto out;
	}

	ASSERT_EQ(5U, recs.nr);
	ASSERT_EQ((__u32)PERF_RECORD_COMM, recs.rec[0]->type);
	ASSERT_EQ(4U, jit_select(&recs, ANY_PID, jit, 5));
	last_time = rec_time(recs.rec[0]);
	for (i = 0; i < 4; i++) {
		const struct sample_id *sid = rec_sample_id(jit[i]);

		/* In emission order, right after the COMM record. */
		EXPECT_EQ(recs.rec[i + 1], jit[i]);
		expect_jit(_metadata, jit[i], &e[i], pid, pid, 0);
		EXPECT_EQ((__u32)pid, sid->pid);
		EXPECT_EQ((__u32)pid, sid->tid);
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
	ASSERT_EQ(0, arg.ret);
	ASSERT_NE(tid, arg.tid);
	ASSERT_EQ(0, emit_one("jit_from_main", 2));

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
		_exit(emit_one("jit_child", 1) ? 1 : 0);
	ASSERT_EQ(0, wait_exit(child));
	ASSERT_EQ(0, emit_one("jit_parent", 2));

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

static int open_cpu_wide(struct ev *ev, int cpu)
{
	struct perf_event_attr attr;

	attr_init(&attr, true);
	return ev_open(ev, &attr, -1, cpu, DATA_PAGES);
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

	ASSERT_EQ(0, emit_one("jit_cpu_wide", 1));
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

	ASSERT_EQ(0, emit_one("jit_elsewhere", 1));
	ASSERT_EQ(0, ev_drain(&ev, &recs));
	EXPECT_EQ(0U, jit_select(&recs, pid, jit, 2));
	records_free(&recs);

	/* Once the task runs there, the event sees it. */
	ASSERT_EQ(0, pin_to_cpu(cpus[1]));
	ASSERT_EQ(0, emit_one("jit_here", 2));
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
		_exit(emit_one("jit_theirs", 1) ? 1 : 0);
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

	ASSERT_EQ(0, emit_one("jit_ours", 2));
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
 * sees them.
 */
TEST_F(jit_code, pid_namespace)
{
	const struct perf_event_header *jit[3];
	struct perf_jit_code_entry e, r;
	struct perf_jit_code_args args;
	struct perf_event_attr attr;
	struct records recs = {};
	int ready[2], go[2], ret;
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

	attr_init(&attr, true);
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		EXPECT_EQ(1, getpid());
		ASSERT_EQ(0, ev_open(&ev, &attr, 0, -1, DATA_PAGES));
		ASSERT_EQ(1, write(ready[1], "r", 1));
		ASSERT_EQ(1, read(go[0], &c, 1));

		ASSERT_EQ(0, emit_one("jit_in_pidns", 1));

		/* The ioctl names processes in the caller's namespace. */
		args_init(&args, &r, 1);
		args.pid = 1;
		EXPECT_EQ(0, jit_ioctl(ev.fd, &args));
		args.pid = outer;
		EXPECT_EQ(-ESRCH, jit_ioctl(ev.fd, &args));

		ASSERT_EQ(0, ev_drain(&ev, &recs));
		ASSERT_EQ(2U, jit_select(&recs, ANY_PID, jit, 3));
		expect_jit(_metadata, jit[0], &e, 1, 1, 0);
		EXPECT_EQ(1U, rec_sample_id(jit[0])->pid);
		EXPECT_EQ(1U, rec_sample_id(jit[0])->tid);
		expect_jit(_metadata, jit[1], &r, 1, 1,
			   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
		_exit(_metadata->exit_code);
	}

	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ret = ev_open(&ev, &attr, child, -1, DATA_PAGES);
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, wait_exit(child));

	ASSERT_EQ(0, ev_drain(&ev, &recs));
	ASSERT_EQ(1U, jit_select(&recs, ANY_PID, jit, 3));
	expect_jit(_metadata, jit[0], &e, child, child, 0);
	EXPECT_EQ((__u32)child, rec_sample_id(jit[0])->pid);
	EXPECT_EQ((__u32)child, rec_sample_id(jit[0])->tid);
	records_free(&recs);
	ev_close(&ev);
}

/*
 * The time in sample_id is on each event's clock. The same emission is
 * seen by an event on the variant's clock and by one on the default perf
 * clock; each is checked against records or clock reads on its own clock.
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
	int ret;

	self->ev.fd = -1;
	self->perf_ev.fd = -1;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
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

TEST_F(clock, timestamp)
{
	struct perf_jit_code_entry e;
	__u64 before = 0, after = 0, t;

	entry_load(&e, CODE_BASE + 0x100, 0x100, 1, "jit_timed");
	ASSERT_EQ(0, prctl(PR_SET_NAME, "jit_before"));
	if (variant->use_clockid)
		before = clock_ns(variant->clockid);
	ASSERT_EQ(0, emit_one("jit_timed", 1));
	if (variant->use_clockid)
		after = clock_ns(variant->clockid);
	ASSERT_EQ(0, prctl(PR_SET_NAME, "jit_after"));

	expect_bracketed(_metadata, &self->perf_ev, &e, &t);
	expect_bracketed(_metadata, &self->ev, &e, &t);
	if (variant->use_clockid) {
		EXPECT_LE(before, t);
		EXPECT_GE(after, t);
	}
}

/*
 * A full batch, every entry delivered in order with every field right,
 * also with argument and entry structs larger than the kernel's whose
 * extra bytes are zero.
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
	int ret;

	self->ev.fd = -1;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
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
		ASSERT_EQ(0, jit_ioctl(self->ev.fd, args));
		flags = PERF_JIT_CODE_FLAGS_SYNTHESIZED;
	} else {
		ASSERT_EQ(0, jit_prctl(args));
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
	ASSERT_EQ(0, jit_prctl(&args));

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
	ASSERT_EQ(0, jit_prctl(&args));

	ASSERT_EQ(0, ev_drain(&ev, &recs));
	ASSERT_EQ(1U, jit_select(&recs, ANY_PID, jit, 2));
	expect_jit(_metadata, jit[0], &e, pid, pid, 0);
	EXPECT_EQ(JIT_RECORD_MIN + sizeof(name), jit[0]->size);
	records_free(&recs);
	ev_close(&ev);
}

/*
 * Bad input: each variant breaks one thing in an otherwise valid call of
 * three entries (LOAD, UNLOAD and the LOAD "victim"), checks the errno and
 * that nothing at all was delivered, then makes the valid call to show the
 * listening event was live.
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

FIXTURE_VARIANT_ADD(bad_input, entries_straddle)
{
	.mutate = mut_entries_straddle,
	.err = EFAULT,
};

FIXTURE_VARIANT_ADD(bad_input, op_unknown)
{
	.mutate = mut_op_unknown,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, op_past_max)
{
	.mutate = mut_op_past_max,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, op_huge)
{
	.mutate = mut_op_huge,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, entry_flags)
{
	.mutate = mut_entry_flags,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, entry_flags_high)
{
	.mutate = mut_entry_flags_high,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, len_zero)
{
	.mutate = mut_len_zero,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, range_wraps)
{
	.mutate = mut_range_wraps,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, range_past_user)
{
	.mutate = mut_range_past_user,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, addr_kernel)
{
	.mutate = mut_addr_kernel,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, move_target_wraps)
{
	.mutate = mut_move_target_wraps,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, move_target_kernel)
{
	.mutate = mut_move_target_kernel,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, move_name)
{
	.mutate = mut_move_name,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, load_new_addr)
{
	.mutate = mut_load_new_addr,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, unload_new_addr)
{
	.mutate = mut_unload_new_addr,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, unload_name)
{
	.mutate = mut_unload_name,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, load_no_name)
{
	.mutate = mut_load_no_name,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, load_empty_name)
{
	.mutate = mut_load_empty_name,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(bad_input, name_unreadable)
{
	.mutate = mut_name_unreadable,
	.err = EFAULT,
};

FIXTURE_VARIANT_ADD(bad_input, name_straddle)
{
	.mutate = mut_name_straddle,
	.err = EFAULT,
};

FIXTURE_VARIANT_ADD(bad_input, name_too_long)
{
	.mutate = mut_name_too_long,
	.err = ENAMETOOLONG,
};

FIXTURE_VARIANT_ADD(bad_input, name_at_guard)
{
	.mutate = mut_name_at_guard,
	.err = ENAMETOOLONG,
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
	ASSERT_NE(MAP_FAILED, ctx->region);
	ctx->guard = ctx->region + 3 * ctx->page;
	ASSERT_EQ(0, mprotect(ctx->guard, ctx->page, PROT_NONE));
	ctx->args = (void *)ctx->region;

	ctx->entries_len = (PERF_JIT_CODE_MAX_ENTRIES + 1) *
			   sizeof(struct perf_jit_code_entry) +
			   (VICTIM + 1) * (ctx->page + 8);
	ctx->entries = malloc(ctx->entries_len);
	ASSERT_NE(NULL, ctx->entries);

	bad_reset(ctx);
	variant->mutate(ctx);
}

FIXTURE_TEARDOWN(bad_input)
{
	ev_close(&self->ev);
	free(self->ctx.entries);
	if (self->ctx.region)
		munmap(self->ctx.region, 4 * self->ctx.page);
}

static void open_listener(struct __test_metadata *_metadata, struct ev *ev)
{
	struct perf_event_attr attr;

	attr_init(&attr, true);
	ASSERT_EQ(0, ev_open(ev, &attr, 0, -1, DATA_PAGES));
}

/* After the failed call: nothing there, then the valid call gets through. */
static void expect_nothing_then_valid(struct __test_metadata *_metadata,
				      struct bad_ctx *ctx, struct ev *ev,
				      bool ioctl)
{
	struct records recs = {};

	ASSERT_EQ(0, ev_drain(ev, &recs));
	EXPECT_EQ(0U, recs.nr);

	bad_reset(ctx);
	ASSERT_EQ(0, ioctl ? jit_ioctl(ev->fd, ctx->args) :
			     jit_prctl(ctx->args));
	ASSERT_EQ(0, ev_drain(ev, &recs));
	EXPECT_EQ(VICTIM + 1U, records_count(&recs, PERF_RECORD_JIT_CODE));
	records_free(&recs);
}

TEST_F(bad_input, prctl)
{
	open_listener(_metadata, &self->ev);
	EXPECT_EQ(-variant->err, jit_prctl(self->ctx.uargs));
	if (variant->size_written_back)
		EXPECT_EQ(sizeof(struct perf_jit_code_args),
			  (size_t)self->ctx.args->size);
	expect_nothing_then_valid(_metadata, &self->ctx, &self->ev, false);
}

/* With no event listening the kernel takes a short cut; still validate. */
TEST_F(bad_input, prctl_unobserved)
{
	EXPECT_EQ(-variant->err, jit_prctl(self->ctx.uargs));
	if (variant->size_written_back)
		EXPECT_EQ(sizeof(struct perf_jit_code_args),
			  (size_t)self->ctx.args->size);
}

TEST_F(bad_input, ioctl)
{
	const struct perf_event_header *jit[VICTIM + 2];
	struct perf_jit_code_entry e;
	int err = variant->ioctl_err ? variant->ioctl_err : variant->err;
	struct records recs = {};
	unsigned int i;

	if (variant->ioctl_valid)
		err = 0;
	open_listener(_metadata, &self->ev);
	EXPECT_EQ(-err, jit_ioctl(self->ev.fd, self->ctx.uargs));
	if (variant->size_written_back)
		EXPECT_EQ(sizeof(struct perf_jit_code_args),
			  (size_t)self->ctx.args->size);
	if (err) {
		expect_nothing_then_valid(_metadata, &self->ctx, &self->ev,
					  true);
		return;
	}

	/* Valid for the ioctl: the entries are delivered as given. */
	ASSERT_EQ(0, ev_drain(&self->ev, &recs));
	ASSERT_EQ(VICTIM + 1U, jit_select(&recs, ANY_PID, jit, VICTIM + 2));
	for (i = 0; i <= VICTIM; i++) {
		memcpy(&e, bad_entry(&self->ctx, i), sizeof(e));
		expect_jit(_metadata, jit[i], &e, getpid(), getpid(),
			   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
	}
	records_free(&recs);
}

/*
 * The ioctl writes into the one event it is called on, whatever that event
 * monitors and wherever its buffer lives, never into other events.
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
	__u64 t0, t1, t2;
	unsigned int i;

	entries_mixed(e, 1, "jit_replayed");
	entry_load(&s, CODE_BASE + 0x2000, 0x40, 2, "jit_sleeper");

	t0 = clock_ns(CLOCK_MONOTONIC);
	args_init(&args, e, 3);
	ASSERT_EQ(0, jit_ioctl(self->ev.fd, &args));
	t1 = clock_ns(CLOCK_MONOTONIC);
	args_init(&args, &s, 1);
	args.pid = self->sleeper;
	ASSERT_EQ(0, jit_ioctl(self->ev.fd, &args));
	t2 = clock_ns(CLOCK_MONOTONIC);

	ASSERT_EQ(0, ev_drain(&self->ev, &recs));
	ASSERT_EQ(3U, jit_select(&recs, pid, jit, 4));
	for (i = 0; i < 3; i++) {
		const struct sample_id *sid = rec_sample_id(jit[i]);

		expect_jit(_metadata, jit[i], &e[i], pid, pid,
			   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
		EXPECT_EQ(self->ev.id, sid->id);
		EXPECT_LE(t0, sid->time);
		EXPECT_GE(t1, sid->time);
		/* Written on the CPU that owns the buffer. */
		if (self->cpu >= 0)
			EXPECT_EQ((__u32)self->cpu, sid->cpu);
	}

	ASSERT_EQ(1U, jit_select(&recs, self->sleeper, jit, 4));
	expect_jit(_metadata, jit[0], &s, self->sleeper, self->sleeper,
		   PERF_JIT_CODE_FLAGS_SYNTHESIZED);
	EXPECT_LE(t1, rec_sample_id(jit[0])->time);
	EXPECT_GE(t2, rec_sample_id(jit[0])->time);
	if (self->cpu >= 0)
		EXPECT_EQ((__u32)self->cpu, rec_sample_id(jit[0])->cpu);
	records_free(&recs);

	ASSERT_EQ(0, ev_drain(&self->bystander, &recs));
	EXPECT_EQ(0U, records_count(&recs, PERF_RECORD_JIT_CODE));
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
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(KSFT_SKIP);
		args_init(&args, &e, 1);
		args.pid = parent;
		EXPECT_EQ(-EACCES, jit_ioctl(ev.fd, &args));
		args.pid = INT_MAX;
		EXPECT_EQ(-ESRCH, jit_ioctl(ev.fd, &args));
		args.pid = getpid();
		EXPECT_EQ(0, jit_ioctl(ev.fd, &args));
		args.pid = 0;
		EXPECT_EQ(0, jit_ioctl(ev.fd, &args));
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

/*
 * A full buffer loses records the usual way: a later PERF_RECORD_LOST
 * accounts for every record that did not fit.
 */
FIXTURE(ring_full)
{
	struct ev ev;
};

FIXTURE_VARIANT(ring_full)
{
	bool ioctl;
};

FIXTURE_VARIANT_ADD(ring_full, prctl)
{
	.ioctl = false,
};

FIXTURE_VARIANT_ADD(ring_full, ioctl)
{
	.ioctl = true,
};

FIXTURE_SETUP(ring_full)
{
	struct perf_event_attr attr;
	int ret;

	self->ev.fd = -1;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	attr_init(&attr, true);
	ret = ev_open(&self->ev, &attr, 0, -1, 1);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(ring_full)
{
	ev_close(&self->ev);
}

static int ring_full_emit(struct ev *ev, bool ioctl,
			  const struct perf_jit_code_entry *e, __u32 nr)
{
	struct perf_jit_code_args args;

	args_init(&args, e, nr);
	return ioctl ? jit_ioctl(ev->fd, &args) : jit_prctl(&args);
}

TEST_F(ring_full, lost_accounted)
{
	const __u32 nr = PERF_JIT_CODE_MAX_ENTRIES;
	const struct perf_event_header **jit;
	struct perf_jit_code_entry *e;
	struct records recs = {};
	__u64 lost = 0;
	__u32 i, n;

	e = calloc(nr + 1, sizeof(*e));
	jit = calloc(nr + 1, sizeof(*jit));
	ASSERT_TRUE(e && jit);
	for (i = 0; i <= nr; i++)
		entry_unload(&e[i], CODE_BASE + i * 0x100ULL, 0x100, i);

	/* Lost records are not the caller's error. */
	ASSERT_EQ(0, ring_full_emit(&self->ev, variant->ioctl, e, nr));
	ASSERT_EQ(0, ev_drain(&self->ev, &recs));
	n = jit_select(&recs, ANY_PID, jit, nr + 1);
	EXPECT_EQ((self->ev.data_size - 1) / JIT_RECORD_MIN, n);
	ASSERT_LT(n, nr);
	for (i = 0; i < n; i++)
		EXPECT_EQ((__u64)i, ((const struct jit_record *)jit[i])->code_index);

	/* With room again, the loss is reported ahead of the next record. */
	ASSERT_EQ(0, ring_full_emit(&self->ev, variant->ioctl, &e[nr], 1));
	ASSERT_EQ(0, ev_drain(&self->ev, &recs));
	for (i = 0; i < recs.nr; i++) {
		const struct lost_record *l = (const void *)recs.rec[i];

		if (l->header.type != PERF_RECORD_LOST)
			continue;
		EXPECT_EQ(self->ev.id, l->id);
		lost += l->lost;
	}
	EXPECT_LT(0ULL, lost);
	EXPECT_EQ((__u64)nr, n + lost);
	ASSERT_EQ(n + 1, jit_select(&recs, ANY_PID, jit, nr + 1));
	EXPECT_EQ((__u64)nr, ((const struct jit_record *)jit[n])->code_index);
	EXPECT_EQ((__u32)PERF_RECORD_JIT_CODE, recs.rec[recs.nr - 1]->type);

	records_free(&recs);
	free(jit);
	free(e);
}

TEST_HARNESS_MAIN
