/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the JIT code selftests share: the record layouts as
 * <linux/perf_event.h> documents them, events and their ring buffers,
 * entries and the two calls. Include after ../kselftest_harness.h.
 */
#ifndef JIT_CODE_H
#define JIT_CODE_H

#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

#define SAMPLE_TYPE	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_ID | PERF_SAMPLE_CPU)

#define JIT_OPS_MASK	((1 << PERF_JIT_CODE_LOAD) | \
			 (1 << PERF_JIT_CODE_UNLOAD) | \
			 (1 << PERF_JIT_CODE_MOVE) | \
			 (1 << PERF_JIT_CODE_FLUSH) | \
			 (1 << PERF_JIT_CODE_DATA))

#define DATA_PAGES	16
#define BATCH_PAGES	64
#define REPLAY_PAGES	2

/* Made-up code addresses, valid user addresses on every arch, 32-bit too. */
#define CODE_BASE	0x40000000ULL
#define MOVE_BASE	0x50000000ULL
#define KERNEL_ADDR	0xffff800000000000ULL

#define ANY_PID		((__u32)-1)

#define ALIGN8(x)	(((x) + 7) & ~(size_t)7)

#define NSEC_PER_SEC	1000000000ULL

/*
 * Record bytes one call may write before it returns: "about 64 KiB" says
 * the ABI; the tests allow three times that.
 */
#define CALL_BYTES_MAX	(192 * 1024)

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

/* PERF_RECORD_JIT_CODE_DATA up to data[], as <linux/perf_event.h> says */
struct data_record {
	struct perf_event_header	header;
	__u32				pid, tid;
	__u32				type;
	__u32				flags;
	__u64				addr;
	__u64				code_index;
	__u32				offset;
	__u32				size;
	__u32				total;
	__u32				__reserved;
	unsigned char			data[];
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
#define LOST_RECORD_SIZE (sizeof(struct lost_record) + sizeof(struct sample_id))

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

static inline long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

static inline pid_t sys_gettid(void)
{
	return syscall(__NR_gettid);
}

static inline bool jit_code_supported(void)
{
	return prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 0UL, 0UL) >= 0;
}

/* perf_event_open() errors that mean "not allowed here" */
static inline bool perf_unavailable(int err)
{
	return err == -EACCES || err == -EPERM;
}

/*
 * Become uid and gid 65534 (nobody), without supplementary groups: a
 * process with none of the rights of the root test that forked it.
 * 0, or -1 with errno set.
 */
static inline int drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return -1;
	return 0;
}

static inline void attr_init(struct perf_event_attr *attr, bool jit_code)
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

static inline void ev_close(struct ev *ev)
{
	if (ev->map && ev->map != MAP_FAILED)
		munmap(ev->map, ev->map_len);
	if (ev->fd >= 0)
		close(ev->fd);
	memset(ev, 0, sizeof(*ev));
	ev->fd = -1;
}

/*
 * Open an event and map @data_pages of ring buffer with @prot: PROT_READ
 * alone makes it an overwrite buffer, and 0 pages leave the event without
 * a buffer. Returns 0 or -errno.
 */
static inline int ev_open_prot(struct ev *ev, struct perf_event_attr *attr,
			       pid_t pid, int cpu, unsigned int data_pages, int prot)
{
	long page = page_size();
	int err;

	memset(ev, 0, sizeof(*ev));
	ev->fd = syscall(__NR_perf_event_open, attr, pid, cpu, -1,
			 PERF_FLAG_FD_CLOEXEC);
	if (ev->fd < 0)
		return -errno;
	if (ioctl(ev->fd, PERF_EVENT_IOC_ID, &ev->id))
		goto err;
	if (!data_pages)
		return 0;

	ev->map_len = (1 + data_pages) * page;
	ev->map = mmap(NULL, ev->map_len, prot, MAP_SHARED, ev->fd, 0);
	if (ev->map == MAP_FAILED)
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

/* Open an event and map @data_pages of ring buffer; 0 or -errno. */
static inline int ev_open(struct ev *ev, struct perf_event_attr *attr, pid_t pid,
			  int cpu, unsigned int data_pages)
{
	return ev_open_prot(ev, attr, pid, cpu, data_pages,
			    PROT_READ | PROT_WRITE);
}

/* A compiler barrier: memory is read and written anew after it. */
static inline void compiler_barrier(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/*
 * The ring's head and tail, with the barriers of
 * tools/include/linux/ring_buffer.h, and plain accesses: i386 has no
 * 64-bit atomics for a __u64 aligned to 4 bytes.
 */
static inline __u64 ev_head(const struct ev *ev)
{
	__u64 head;

	compiler_barrier();
	head = ev->page->data_head;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return head;
}

static inline void ev_set_tail(struct ev *ev, __u64 tail)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	ev->page->data_tail = tail;
	compiler_barrier();
}

static inline void rb_copy(const struct ev *ev, __u64 pos, void *dst, size_t len)
{
	size_t off = pos & (ev->data_size - 1);
	size_t first = ev->data_size - off;

	if (first > len)
		first = len;
	memcpy(dst, ev->data + off, first);
	memcpy((char *)dst + first, ev->data, len - first);
}

static inline int records_add(struct records *recs, struct perf_event_header *rec)
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

static inline void records_free(struct records *recs)
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
static inline int ev_drain(struct ev *ev, struct records *recs)
{
	__u64 head = ev_head(ev);
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
	ev_set_tail(ev, tail);
	return 0;
}

static inline unsigned int records_count(const struct records *recs, __u32 type)
{
	unsigned int i, n = 0;

	for (i = 0; i < recs->nr; i++)
		n += recs->rec[i]->type == type;
	return n;
}

/* The JIT_CODE records with pid @pid (ANY_PID: all), in ring order. */
static inline unsigned int jit_select(const struct records *recs, __u32 pid,
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

static inline const struct sample_id *rec_sample_id(const struct perf_event_header *hdr)
{
	return (const void *)((const char *)hdr + hdr->size -
			      sizeof(struct sample_id));
}

static inline __u64 rec_time(const struct perf_event_header *hdr)
{
	return rec_sample_id(hdr)->time;
}

/*
 * Check one PERF_RECORD_JIT_CODE against the entry it reports, for an
 * event whose sample_id takes @id_size bytes: the fields passed through,
 * those the kernel fills in, and that the name is terminated and
 * zero-padded with nothing else in the record.
 */
static inline void expect_jit_layout(struct __test_metadata *_metadata,
				     const struct perf_event_header *hdr,
				     const struct perf_jit_code_entry *e,
				     pid_t pid, pid_t tid, __u32 flags,
				     size_t id_size)
{
	const struct jit_record *rec = (const void *)hdr;
	size_t fixed = sizeof(*rec) + id_size;
	size_t room, len, i, dirty = 0;

	ASSERT_EQ((__u32)PERF_RECORD_JIT_CODE, hdr->type);
	ASSERT_GE(hdr->size, fixed);
	EXPECT_EQ(PERF_RECORD_MISC_USER, hdr->misc);
	EXPECT_EQ((__u32)pid, rec->pid);
	EXPECT_EQ((__u32)tid, rec->tid);
	EXPECT_EQ(e->op, rec->op);
	EXPECT_EQ(flags, rec->flags);
	EXPECT_EQ(e->addr, rec->addr);
	EXPECT_EQ(e->len, rec->len);
	EXPECT_EQ(e->new_addr, rec->new_addr);
	EXPECT_EQ(e->code_index, rec->code_index);

	room = hdr->size - fixed;
	if (e->op != PERF_JIT_CODE_LOAD) {
		EXPECT_EQ(0UL, (unsigned long)room);
		return;
	}
	len = strnlen(rec->name, room);
	ASSERT_LT(len, room) TH_LOG("name not NUL-terminated");
	EXPECT_EQ(ALIGN8(len + 1), room);
	EXPECT_STREQ((const char *)(uintptr_t)e->name, rec->name);
	for (i = len; i < room; i++)
		dirty += rec->name[i] != 0;
	EXPECT_EQ(0UL, (unsigned long)dirty) TH_LOG("name padding is not zero");
}

/* expect_jit_layout() for SAMPLE_TYPE with sample_id_all */
static inline void expect_jit(struct __test_metadata *_metadata,
			      const struct perf_event_header *hdr,
			      const struct perf_jit_code_entry *e,
			      pid_t pid, pid_t tid, __u32 flags)
{
	expect_jit_layout(_metadata, hdr, e, pid, tid, flags,
			  sizeof(struct sample_id));
	/* A guard against leaking kernel bytes; the kernel writes 0. */
	EXPECT_EQ(0U, rec_sample_id(hdr)->res);
}

/*
 * What is wrong with @hdr as the record of @e in an event @id of
 * SAMPLE_TYPE, sample_id included, or NULL: for loops over many records,
 * which report the first problem rather than every field.
 */
static inline const char *jit_problem(const struct perf_event_header *hdr,
				      const struct perf_jit_code_entry *e,
				      pid_t pid, pid_t tid, __u32 flags, __u64 id)
{
	const struct jit_record *rec = (const void *)hdr;
	const struct sample_id *sid;
	size_t room, len, i;

	if (hdr->type != PERF_RECORD_JIT_CODE)
		return "not a JIT_CODE record";
	if (hdr->size < JIT_RECORD_MIN)
		return "record too short";
	sid = rec_sample_id(hdr);
	if (hdr->misc != PERF_RECORD_MISC_USER)
		return "header.misc";
	if (rec->pid != (__u32)pid || rec->tid != (__u32)tid)
		return "pid or tid";
	if (sid->pid != (__u32)pid || sid->tid != (__u32)tid)
		return "pid or tid in sample_id";
	if (sid->id != id)
		return "id in sample_id";
	if (rec->op != e->op || rec->flags != flags ||
	    rec->addr != e->addr || rec->len != e->len ||
	    rec->new_addr != e->new_addr || rec->code_index != e->code_index)
		return "a field of the entry";

	room = hdr->size - JIT_RECORD_MIN;
	if (e->op != PERF_JIT_CODE_LOAD)
		return room ? "bytes after the fixed part" : NULL;
	len = strnlen(rec->name, room);
	if (len == room)
		return "name not NUL-terminated";
	if (room != ALIGN8(len + 1))
		return "name not padded to 8 bytes exactly";
	for (i = len; i < room; i++)
		if (rec->name[i])
			return "name padding is not zero";
	if (strcmp((const char *)(uintptr_t)e->name, rec->name))
		return "name";
	return NULL;
}

/* The size of the JIT_CODE record of @e in an event of SAMPLE_TYPE */
static inline size_t jit_record_size(const struct perf_jit_code_entry *e)
{
	if (e->op != PERF_JIT_CODE_LOAD)
		return JIT_RECORD_MIN;
	return JIT_RECORD_MIN +
	       ALIGN8(strlen((const char *)(uintptr_t)e->name) + 1);
}

static inline void entry_load(struct perf_jit_code_entry *e, __u64 addr, __u64 len,
			      __u64 index, const char *name)
{
	memset(e, 0, sizeof(*e));
	e->op = PERF_JIT_CODE_LOAD;
	e->addr = addr;
	e->len = len;
	e->code_index = index;
	e->name = (uintptr_t)name;
}

static inline void entry_unload(struct perf_jit_code_entry *e, __u64 addr,
				__u64 len, __u64 index)
{
	memset(e, 0, sizeof(*e));
	e->op = PERF_JIT_CODE_UNLOAD;
	e->addr = addr;
	e->len = len;
	e->code_index = index;
}

static inline void entry_move(struct perf_jit_code_entry *e, __u64 addr, __u64 len,
			      __u64 new_addr, __u64 index)
{
	memset(e, 0, sizeof(*e));
	e->op = PERF_JIT_CODE_MOVE;
	e->addr = addr;
	e->len = len;
	e->new_addr = new_addr;
	e->code_index = index;
}

static inline void entry_flush(struct perf_jit_code_entry *e, __u64 addr,
			       __u64 len, __u64 index)
{
	memset(e, 0, sizeof(*e));
	e->op = PERF_JIT_CODE_FLUSH;
	e->addr = addr;
	e->len = len;
	e->code_index = index;
}

/* One entry of each of LOAD, MOVE and UNLOAD, as most tests emit them. */
static inline void entries_mixed(struct perf_jit_code_entry e[3], __u64 index,
				 const char *name)
{
	entry_load(&e[0], CODE_BASE, 0x80, index, name);
	entry_move(&e[1], CODE_BASE, 0x80, MOVE_BASE, index);
	entry_unload(&e[2], MOVE_BASE, 0x80, index);
}

static inline void args_init(struct perf_jit_code_args *args, const void *entries,
			     __u32 nr)
{
	memset(args, 0, sizeof(*args));
	args->size = sizeof(*args);
	args->entries = (uintptr_t)entries;
	args->nr_entries = nr;
	args->entry_size = sizeof(struct perf_jit_code_entry);
}

/* PR_PERF_JIT_CODE: the number of entries consumed, or -errno */
static inline int jit_prctl(const void *args)
{
	int ret = prctl(PR_PERF_JIT_CODE, (unsigned long)args, 0UL, 0UL, 0UL);

	return ret < 0 ? -errno : ret;
}

/* PERF_EVENT_IOC_JIT_CODE: the number of entries written, or -errno */
static inline int jit_ioctl(int fd, const void *args)
{
	int ret = ioctl(fd, PERF_EVENT_IOC_JIT_CODE, args);

	return ret < 0 ? -errno : ret;
}

/*
 * Take every entry of @args through the prctl (@fd < 0) or the ioctl on
 * @fd, calling again after each short count as callers must. Returns
 * nr_entries, the first error, or -ERANGE for a count out of range. @args
 * is as it was on return.
 */
static inline int jit_call_all(int fd, struct perf_jit_code_args *args)
{
	__u64 entries = args->entries;
	__u32 nr = args->nr_entries, done = 0;
	int ret = 0;

	while (done < nr) {
		args->entries = entries + (__u64)done * args->entry_size;
		args->nr_entries = nr - done;
		ret = fd < 0 ? jit_prctl(args) : jit_ioctl(fd, args);
		if (ret < 0)
			break;
		if (ret == 0 || (__u32)ret > nr - done) {
			ret = -ERANGE;
			break;
		}
		done += ret;
	}
	args->entries = entries;
	args->nr_entries = nr;
	return done == nr ? (int)nr : ret;
}

/* One LOAD through the prctl: 1, or -errno */
static inline int emit_one(const char *name, __u64 index)
{
	struct perf_jit_code_entry e;
	struct perf_jit_code_args args;

	entry_load(&e, CODE_BASE + index * 0x100, 0x100, index, name);
	args_init(&args, &e, 1);
	return jit_prctl(&args);
}

/* The first @max CPUs this task may run on; returns how many were found. */
static inline int allowed_cpus(int *cpus, int max)
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

static inline int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Exit status of a child, or -1 if it did not exit normally. */
static inline int wait_exit(pid_t pid)
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
static inline pid_t spawn_sleeper(int *release)
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

/* Kill a child that may never be told to exit, in a teardown. */
static inline void kill_child(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	*pid = -1;
}

static inline __u64 clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* The common case: an event on the calling thread, any CPU. */
static inline void open_listener(struct __test_metadata *_metadata, struct ev *ev)
{
	struct perf_event_attr attr;

	attr_init(&attr, true);
	ASSERT_EQ(0, ev_open(ev, &attr, 0, -1, DATA_PAGES));
}

static inline int open_cpu_wide(struct ev *ev, int cpu)
{
	struct perf_event_attr attr;

	attr_init(&attr, true);
	return ev_open(ev, &attr, -1, cpu, DATA_PAGES);
}

#endif /* JIT_CODE_H */
