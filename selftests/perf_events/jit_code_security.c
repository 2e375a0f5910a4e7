// SPDX-License-Identifier: GPL-2.0
/*
 * What PERF_RECORD_JIT_CODE must not give away.
 *
 * - No byte of a record is left unwritten or stale: a ring buffer whose
 *   every byte held a pattern before (records with names of 'Q'), names
 *   with garbage after their NUL, and the kernel's stack buffer for names
 *   filled by a call before; every byte of every record, LOST records
 *   included, is compared with what it must be.
 * - Records reach only events allowed to monitor the task: an
 *   unprivileged process, at perf_event_paranoid 2 and 3, gets none of
 *   root's records, cannot open an event on root's process or a CPU-wide
 *   one, and its own records still reach root's CPU-wide event.
 * - A set-user-ID exec ends delivery to the events of the user who
 *   started the process, as it does for samples (the same program
 *   without the bit is the control).
 *
 * Each test drops to uid and gid 65534 and sets perf_event_paranoid for
 * its run; it needs root.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../kselftest_harness.h"

#include "jit_code.h"

#define EXEC_ENV	"JIT_SECURITY_EXEC"

static int paranoid_rw(const char *set, char *old, size_t len)
{
	const char *path = "/proc/sys/kernel/perf_event_paranoid";
	FILE *fp = fopen(path, "r+");
	int ret = -1;

	if (!fp)
		return -1;
	if (old && fgets(old, len, fp))
		ret = 0;
	if (set) {
		rewind(fp);
		ret = fputs(set, fp) < 0 ? -1 : 0;
	}
	if (fclose(fp))
		ret = -1;
	return ret;
}

/*
 * The program exec'ed by the set-user-ID test: report its effective uid
 * on the fd named in EXEC_ENV, make one call and exit.
 */
__attribute__((constructor))
static void exec_child(void)
{
	const char *env = getenv(EXEC_ENV);
	struct perf_jit_code_entry e;
	struct perf_jit_code_args args;
	int fd, euid;

	if (!env)
		return;
	fd = atoi(env);
	euid = geteuid();
	entry_load(&e, CODE_BASE + 0x2000, 0x40, 2, "jit_after_exec");
	args_init(&args, &e, 1);
	if (write(fd, &euid, sizeof(euid)) != sizeof(euid) ||
	    jit_prctl(&args) != 1)
		_exit(1);
	_exit(0);
}

/* Every byte of @hdr against the record @e must give, for event @id. */
static const char *bytes_problem(const struct perf_event_header *hdr,
				 const struct perf_jit_code_entry *e,
				 pid_t pid, __u32 flags, __u64 id, int nr_cpus)
{
	unsigned char want[JIT_RECORD_MIN + PERF_JIT_CODE_NAME_MAX];
	struct jit_record *rec = (void *)want;
	const struct sample_id *got_sid = rec_sample_id(hdr);
	struct sample_id *sid;
	size_t size = jit_record_size(e), name;

	if (hdr->size != size)
		return "size";
	memset(want, 0, sizeof(want));
	rec->header.type = PERF_RECORD_JIT_CODE;
	rec->header.misc = PERF_RECORD_MISC_USER;
	rec->header.size = size;
	rec->pid = pid;
	rec->tid = pid;
	rec->op = e->op;
	rec->flags = flags;
	rec->addr = e->addr;
	rec->len = e->len;
	rec->new_addr = e->new_addr;
	rec->code_index = e->code_index;
	if (e->op == PERF_JIT_CODE_LOAD) {
		name = strlen((const char *)(uintptr_t)e->name);
		memcpy(rec->name, (const char *)(uintptr_t)e->name, name);
	}
	sid = (void *)(want + size - sizeof(*sid));
	sid->pid = pid;
	sid->tid = pid;
	sid->id = id;
	/* time and cpu vary: taken from the record once checked */
	if (!got_sid->time || got_sid->cpu >= (__u32)nr_cpus)
		return "sample_id time or cpu";
	sid->time = got_sid->time;
	sid->cpu = got_sid->cpu;
	return memcmp(want, hdr, size) ? "a byte differs" : NULL;
}

/* Entries whose names cover every length of padding, and each op. */
static unsigned int entries_padding(struct perf_jit_code_entry *e,
				    char names[][64], char *longest)
{
	unsigned int i, n = 0;

	for (i = 0; i < 24; i++) {
		/* the name, its NUL, then bytes the kernel must not copy */
		memset(names[i], 'Z', 64);
		memset(names[i], 'a' + i, i + 1);
		names[i][i + 1] = '\0';
		entry_load(&e[n++], CODE_BASE + i * 0x100, 0x100, i, names[i]);
	}
	memset(longest, 'L', PERF_JIT_CODE_NAME_MAX - 1);
	longest[PERF_JIT_CODE_NAME_MAX - 1] = '\0';
	entry_load(&e[n++], CODE_BASE + 0x8000, 0x100, 100, longest);
	entry_unload(&e[n++], CODE_BASE, 0x100, 101);
	entry_move(&e[n++], CODE_BASE + 0x100, 0x100, MOVE_BASE, 102);
	entry_flush(&e[n++], CODE_BASE, 0x10000, 103);
	return n;
}

/*
 * Fill every byte of the ring buffer with a pattern: records whose names
 * are 'Q's, read as they come, until the ring has gone round twice. User
 * space cannot write the data pages itself.
 */
static void ring_prefill(struct __test_metadata *_metadata, struct ev *ev)
{
	struct perf_jit_code_entry e[8];
	struct perf_jit_code_args args;
	static char name[1000];
	struct records recs = {};
	unsigned int i;

	memset(name, 'Q', sizeof(name) - 1);
	for (i = 0; i < 8; i++)
		entry_load(&e[i], CODE_BASE, 0x10, i, name);
	args_init(&args, e, 8);
	while (ev_head(ev) < 2 * ev->data_size) {
		ASSERT_EQ(8, jit_prctl(&args));
		ASSERT_EQ(0, ev_drain(ev, &recs));
		records_free(&recs);
	}
}

/*
 * Fill the kernel's stack buffer for names (256 bytes) with 'S' by a call
 * whose one name fills it. The names of the next call's first chunk go
 * there, the later ones to a buffer from kmalloc().
 */
static void stack_prime(struct __test_metadata *_metadata)
{
	struct perf_jit_code_entry e;
	struct perf_jit_code_args args;
	static char name[248];

	memset(name, 'S', sizeof(name) - 1);
	entry_load(&e, CODE_BASE, 0x10, 1, name);
	args_init(&args, &e, 1);
	ASSERT_EQ(1, jit_prctl(&args));
}

FIXTURE(padding)
{
	struct ev ev;
	int nr_cpus;
};

FIXTURE_VARIANT(padding)
{
	bool ioctl;
};

FIXTURE_VARIANT_ADD(padding, prctl)
{
	.ioctl = false,
};

FIXTURE_VARIANT_ADD(padding, ioctl)
{
	.ioctl = true,
};

FIXTURE_SETUP(padding)
{
	struct perf_event_attr attr;
	int ret;

	self->ev.fd = -1;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	self->nr_cpus = sysconf(_SC_NPROCESSORS_CONF);
	attr_init(&attr, true);
	ret = ev_open(&self->ev, &attr, 0, -1, DATA_PAGES);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(padding)
{
	ev_close(&self->ev);
}

TEST_F(padding, every_byte)
{
	struct perf_jit_code_entry e[32];
	struct perf_jit_code_args args;
	static char names[24][64], longest[PERF_JIT_CODE_NAME_MAX];
	const struct perf_event_header *jit[33];
	__u32 flags = variant->ioctl ? PERF_JIT_CODE_FLAGS_SYNTHESIZED : 0;
	struct records recs = {};
	unsigned int i, n;
	const char *why;

	n = entries_padding(e, names, longest);
	ring_prefill(_metadata, &self->ev);
	/* The prime goes to the buffer too: drop its records. */
	stack_prime(_metadata);
	ASSERT_EQ(0, ev_drain(&self->ev, &recs));
	records_free(&recs);

	args_init(&args, e, n);
	ASSERT_EQ((int)n, variant->ioctl ? jit_ioctl(self->ev.fd, &args) :
					     jit_prctl(&args));
	ASSERT_EQ(0, ev_drain(&self->ev, &recs));
	ASSERT_EQ(n, jit_select(&recs, ANY_PID, jit, 33));
	for (i = 0; i < n; i++) {
		why = bytes_problem(jit[i], &e[i], getpid(), flags,
				    self->ev.id, self->nr_cpus);
		EXPECT_EQ(NULL, why) TH_LOG("record %u: %s", i, why);
	}
	records_free(&recs);
}

/*
 * A LOST record: id, count and sample_id, nothing else. A buffer of one
 * page, filled by the prctl without being read, then read. (The ioctl
 * stops before a full buffer: it loses nothing.)
 */
TEST(lost_record)
{
	struct perf_jit_code_entry e[32];
	struct perf_jit_code_args args;
	static char names[24][64], longest[PERF_JIT_CODE_NAME_MAX];
	struct perf_event_attr attr;
	struct records recs = {};
	const struct lost_record *lost = NULL;
	const struct sample_id *sid;
	unsigned int i, n, sent = 0;
	struct ev small;
	int ret;

	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	attr_init(&attr, true);
	ret = ev_open(&small, &attr, 0, -1, 1);
	if (perf_unavailable(ret))
		SKIP(return, "perf_event_open: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
	n = entries_padding(e, names, longest);
	args_init(&args, e, n);
	for (i = 0; i < 8; i++)
		sent += jit_prctl(&args);
	ASSERT_EQ(8 * n, sent);
	ASSERT_EQ(0, ev_drain(&small, &recs));
	/* The LOST record comes before the first record after the gap. */
	ASSERT_EQ(0, ev_drain(&small, &recs));
	for (i = 0; i < recs.nr && !lost; i++)
		if (recs.rec[i]->type == PERF_RECORD_LOST)
			lost = (const void *)recs.rec[i];
	if (!lost) {
		/* Written when the next record finds room: make one. */
		ASSERT_EQ(1, emit_one("jit_after_loss", 1));
		ASSERT_EQ(0, ev_drain(&small, &recs));
		for (i = 0; i < recs.nr && !lost; i++)
			if (recs.rec[i]->type == PERF_RECORD_LOST)
				lost = (const void *)recs.rec[i];
	}
	ASSERT_NE(NULL, lost);
	EXPECT_EQ(LOST_RECORD_SIZE, lost->header.size);
	EXPECT_EQ(0, lost->header.misc);
	EXPECT_EQ(small.id, lost->id);
	EXPECT_LT(0ULL, lost->lost);
	sid = (const void *)(lost + 1);
	EXPECT_EQ((__u32)getpid(), sid->pid);
	EXPECT_EQ((__u32)getpid(), sid->tid);
	EXPECT_EQ(small.id, sid->id);
	EXPECT_NE(0ULL, sid->time);
	EXPECT_EQ(0U, sid->res);
	records_free(&recs);
	ev_close(&small);
}

/* One side of the monitoring test, as the unprivileged user. */
struct nobody_result {
	int open_self, open_root, open_cpu;	/* 0 or -errno */
	unsigned int jit_self, jit_other;	/* records in its own event */
	int injected;
};

FIXTURE(monitor)
{
	char paranoid[16];
	bool restore;
	struct ev root_cpu[2];
};

FIXTURE_VARIANT(monitor)
{
	const char *paranoid;
};

FIXTURE_VARIANT_ADD(monitor, paranoid_2)
{
	.paranoid = "2",
};

FIXTURE_VARIANT_ADD(monitor, paranoid_3)
{
	.paranoid = "3",
};

FIXTURE_SETUP(monitor)
{
	int i;

	self->root_cpu[0].fd = -1;
	self->root_cpu[1].fd = -1;
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	if (geteuid())
		SKIP(return, "needs root to drop to an unprivileged user");
	ASSERT_EQ(0, paranoid_rw(variant->paranoid, self->paranoid,
				 sizeof(self->paranoid)));
	self->restore = true;
	/* root's CPU-wide events: they may see everyone */
	for (i = 0; i < 2 && i < sysconf(_SC_NPROCESSORS_ONLN); i++)
		ASSERT_EQ(0, open_cpu_wide(&self->root_cpu[i], i));
}

FIXTURE_TEARDOWN(monitor)
{
	ev_close(&self->root_cpu[0]);
	ev_close(&self->root_cpu[1]);
	if (self->restore)
		paranoid_rw(self->paranoid, NULL, 0);
}

TEST_F(monitor, only_allowed_events)
{
	int to_child[2], to_parent[2], i;
	struct nobody_result res = {};
	struct records recs = {};
	unsigned int from_child = 0;
	char c;
	pid_t root = getpid(), child;

	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		struct perf_event_attr attr;
		struct ev own, other;

		if (drop_to_nobody())
			_exit(KSFT_SKIP);
		attr_init(&attr, true);
		res.open_self = ev_open(&own, &attr, 0, -1, DATA_PAGES);
		res.open_root = ev_open(&other, &attr, root, -1, DATA_PAGES);
		if (!res.open_root)
			ev_close(&other);
		res.open_cpu = open_cpu_wide(&other, 0);
		if (!res.open_cpu)
			ev_close(&other);
		/* Let root call, wait for it, then call. */
		if (write(to_parent[1], "r", 1) != 1 ||
		    read(to_child[0], &c, 1) != 1)
			_exit(1);
		res.injected = emit_one("jit_nobody", 7);
		if (!res.open_self) {
			ev_drain(&own, &recs);
			res.jit_self = jit_select(&recs, getpid(), NULL, 0);
			res.jit_other = jit_select(&recs, ANY_PID, NULL, 0) -
					res.jit_self;
		}
		if (write(to_parent[1], &res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(1, read(to_parent[0], &c, 1));
	ASSERT_EQ(1, emit_one("jit_root", 8));
	ASSERT_EQ(1, write(to_child[1], "g", 1));
	ASSERT_EQ(sizeof(res), read(to_parent[0], &res, sizeof(res)));
	ASSERT_EQ(0, wait_exit(child));

	/* The unprivileged side */
	EXPECT_EQ(strcmp(variant->paranoid, "3") ? 0 : -EACCES, res.open_self);
	EXPECT_EQ(-EACCES, res.open_root);
	EXPECT_EQ(-EACCES, res.open_cpu);
	EXPECT_EQ(1, res.injected);
	EXPECT_EQ(0U, res.jit_other) TH_LOG("root's record reached nobody");
	EXPECT_EQ(res.open_self ? 0U : 1U, res.jit_self);

	/* root's CPU-wide events saw both */
	for (i = 0; i < 2; i++) {
		if (self->root_cpu[i].fd < 0)
			continue;
		ASSERT_EQ(0, ev_drain(&self->root_cpu[i], &recs));
	}
	from_child = jit_select(&recs, child, NULL, 0);
	EXPECT_EQ(1U, from_child);
	EXPECT_EQ(1U, jit_select(&recs, root, NULL, 0));
	records_free(&recs);
}

FIXTURE(setuid)
{
	char dir[64], path[96], paranoid[16];
	bool restore;
};

FIXTURE_VARIANT(setuid)
{
	bool setuid;
};

FIXTURE_VARIANT_ADD(setuid, set_user_id)
{
	.setuid = true,
};

FIXTURE_VARIANT_ADD(setuid, plain)
{
	.setuid = false,
};

FIXTURE_SETUP(setuid)
{
	char buf[65536];
	ssize_t n;
	int in, out;

	self->dir[0] = '\0';
	if (!jit_code_supported())
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	if (geteuid())
		SKIP(return, "needs root to make a set-user-ID program");
	ASSERT_EQ(0, paranoid_rw("2", self->paranoid, sizeof(self->paranoid)));
	self->restore = true;

	/* A copy of this program, owned by root, in a folder nobody reads. */
	snprintf(self->dir, sizeof(self->dir), "/tmp/jit_code_setuid.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, chmod(self->dir, 0755));
	snprintf(self->path, sizeof(self->path), "%s/prog", self->dir);
	in = open("/proc/self/exe", O_RDONLY);
	ASSERT_LE(0, in);
	out = open(self->path, O_WRONLY | O_CREAT | O_EXCL, 0700);
	ASSERT_LE(0, out);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ASSERT_EQ(n, write(out, buf, n));
	close(in);
	ASSERT_EQ(0, close(out));
	ASSERT_EQ(0, chmod(self->path, variant->setuid ? 04755 : 0755));
}

FIXTURE_TEARDOWN(setuid)
{
	if (self->dir[0]) {
		unlink(self->path);
		rmdir(self->dir);
	}
	if (self->restore)
		paranoid_rw(self->paranoid, NULL, 0);
}

/*
 * nobody watches a process of its own, which calls, then execs the copy,
 * which calls again. Across a set-user-ID exec the event stops receiving,
 * as samples stop.
 */
TEST_F(setuid, exec_ends_delivery)
{
	int go[2], euid_pipe[2], status;
	struct ev ev;
	pid_t observer;

	ASSERT_EQ(0, pipe(euid_pipe));
	observer = fork();
	ASSERT_LE(0, observer);
	if (!observer) {
		struct perf_event_attr attr;
		struct records recs = {};
		unsigned int before, after;
		char env[32];
		int euid = -1;
		pid_t child;

		/*
		 * Dropping privileges made this process not dumpable, and its
		 * child with it: nobody could watch it. Undo that.
		 */
		if (drop_to_nobody() || prctl(PR_SET_DUMPABLE, 1) || pipe(go))
			_exit(KSFT_SKIP);
		child = fork();
		if (!child) {
			char c;

			if (read(go[0], &c, 1) != 1 ||
			    emit_one("jit_before_exec", 1) != 1)
				_exit(1);
			snprintf(env, sizeof(env), "%d", euid_pipe[1]);
			setenv(EXEC_ENV, env, 1);
			execl(self->path, "jit_code_security", NULL);
			_exit(1);
		}
		attr_init(&attr, true);
		if (child < 0 || ev_open(&ev, &attr, child, -1, DATA_PAGES))
			_exit(2);
		if (write(go[1], "g", 1) != 1 || wait_exit(child) != 0 ||
		    read(euid_pipe[0], &euid, sizeof(euid)) != sizeof(euid))
			_exit(3);
		ev_drain(&ev, &recs);
		before = 0;
		after = 0;
		for (unsigned int i = 0; i < recs.nr; i++) {
			const struct jit_record *r = (const void *)recs.rec[i];

			if (r->header.type != PERF_RECORD_JIT_CODE)
				continue;
			before += !strcmp(r->name, "jit_before_exec");
			after += !strcmp(r->name, "jit_after_exec");
		}
		/* 4: the exec was not set-user-ID (a nosuid /tmp) */
		if (variant->setuid && euid != 0)
			_exit(4);
		if (before != 1)
			_exit(5);
		_exit(after == (variant->setuid ? 0 : 1) ? 0 : 6);
	}
	ASSERT_EQ(observer, waitpid(observer, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 4)
		SKIP(return, "the copy did not run set-user-ID: /tmp is nosuid");
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("2: no event, 3: child failed, 5: the record before exec is missing, 6: %s",
		       variant->setuid ? "a record after the set-user-ID exec arrived" :
					 "the record after a plain exec is missing");
}

TEST_HARNESS_MAIN
