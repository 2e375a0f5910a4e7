// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The file backends when a call is interrupted by a signal or a write
 * comes up short, which no file system does on demand: linked with
 * -Wl,--wrap=write,--wrap=writev,--wrap=fcntl against libperfinject.a,
 * the library's calls come here first, and a seeded PRNG fails them.
 *
 * EINTR (nothing written) on 30% of the writes and blocking lock waits:
 * every call is retried, so the files hold what a run without signals
 * writes, and nothing is said.
 *
 * A disk that fills at a random write: the first write to each file from
 * there on comes up short, every later one again or with ENOSPC. The
 * runtime's calls succeed, the registry keeps every live entry, each file
 * holds what the run without faults wrote up to a whole line or record,
 * and the library says so once for each file it could not write.
 *
 * Usage: eintr_faults [SEED]
 */
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

ssize_t __real_write(int fd, const void *buf, size_t len);
ssize_t __real_writev(int fd, const struct iovec *iov, int iovcnt);
int __real_fcntl(int fd, int cmd, ...);

enum fault_mode {
	FAULT_NONE,
	FAULT_EINTR,
	FAULT_DISK_FULL,
};

static enum fault_mode mode;
static uint64_t rng = 0x5eed0fba11edULL;

/* Calls that can be interrupted, and those that were. */
enum { CALL_WRITE, CALL_WRITEV, CALL_LOCKW, NR_CALLS };
static const char *const call_names[NR_CALLS] = {
	"write", "writev", "fcntl(F_OFD_SETLKW)",
};

static unsigned long calls[NR_CALLS], eintrs[NR_CALLS];
static unsigned long eintr_run, longest_run;

/* The disk fills at write (or writev) number full_at, counted from 1. */
static unsigned long nr_writes, full_at;
static unsigned long shorts, enospcs;
#define FD_MAX		1024
static bool fd_hit[FD_MAX];
static bool map_hit, dump_hit;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return ((rng * 0x2545F4914F6CDD1DULL) >> 32) % n;
}

static bool inject_eintr(int call)
{
	calls[call]++;
	if (mode != FAULT_EINTR || rnd(10) >= 3) {
		eintr_run = 0;
		return false;
	}
	eintrs[call]++;
	if (++eintr_run > longest_run)
		longest_run = eintr_run;
	errno = EINTR;
	return true;
}

/*
 * How much of @len bytes to @fd the full disk takes: fewer than asked,
 * or -1 for ENOSPC. The first write to a file after the disk filled comes
 * up short, to leave a torn line or record behind.
 */
static ssize_t disk_full(int fd, size_t len)
{
	char link[64], path[PATH_MAX], *base;
	ssize_t n;

	if (mode != FAULT_DISK_FULL || ++nr_writes < full_at)
		return len;
	if (fd >= 0 && fd < FD_MAX && !fd_hit[fd]) {
		fd_hit[fd] = true;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, path, sizeof(path) - 1);
		path[n > 0 ? n : 0] = '\0';
		base = strrchr(path, '/');
		map_hit |= base && !strncmp(base, "/perf-", 6);
		dump_hit |= base && !strncmp(base, "/jit-", 5);
	} else if (rnd(2)) {
		len = 0;
	}
	if (len <= 1) {
		enospcs++;
		return -1;
	}
	shorts++;
	return 1 + rnd(len - 1);
}

ssize_t __wrap_write(int fd, const void *buf, size_t len)
{
	ssize_t room;

	if (inject_eintr(CALL_WRITE))
		return -1;
	room = disk_full(fd, len);
	if (room < 0) {
		errno = ENOSPC;
		return -1;
	}
	return __real_write(fd, buf, room);
}

ssize_t __wrap_writev(int fd, const struct iovec *iov, int iovcnt)
{
	struct iovec part[8];
	size_t len = 0;
	ssize_t room;
	int i, n;

	if (inject_eintr(CALL_WRITEV))
		return -1;
	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	room = disk_full(fd, len);
	if ((size_t)room == len)
		return __real_writev(fd, iov, iovcnt);
	if (room < 0 || iovcnt > 8) {
		errno = ENOSPC;
		return -1;
	}
	for (n = 0; room; n++) {
		part[n] = iov[n];
		if ((size_t)room < part[n].iov_len)
			part[n].iov_len = room;
		room -= part[n].iov_len;
	}
	return __real_writev(fd, part, n);
}

int __wrap_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	/* Only a lock wait blocks, so only a lock wait sees a signal. */
	if (cmd == F_OFD_SETLKW && inject_eintr(CALL_LOCKW))
		return -1;
	return __real_fcntl(fd, cmd, arg);
}

static int warnings, map_warnings, dump_warnings;
static char last_warning[256];

static int count_warnings(enum perfinject_print_level level, const char *fmt,
			  va_list ap)
{
	if (level != PERFINJECT_WARN)
		return 0;
	warnings++;
	vsnprintf(last_warning, sizeof(last_warning), fmt, ap);
	if (strstr(last_warning, "jitdump"))
		dump_warnings++;
	else if (strstr(last_warning, "perf-map"))
		map_warnings++;
	return 0;
}

#define SLOTS		256
#define SLOT_SZ		64
#define EINTR_ROUNDS	8
#define DISK_FULL_ROUNDS 64

/* Code to describe: real bytes for the jitdump, and room to move it. */
static unsigned char code[2 * SLOTS * SLOT_SZ];

static uint64_t slot(unsigned int s)
{
	return (uint64_t)(uintptr_t)code + (uint64_t)s * SLOT_SZ;
}

static const struct perfinject_frame frames[] = {
	{ .file = "Service.java", .function = "helper", .line = 42 },
	{ .file = "Service.java", .line = 7 },
};

static struct perfinject_line lines[] = {
	{ .frames = &frames[1], .nr_frames = 1 },
	{ .frames = frames, .nr_frames = 2 },
};

static const unsigned char eh_frame[24] = { 0x14 };
static const unsigned char eh_frame_hdr[8] = { 0x01, 0x1b, 0x03, 0x3b };

static char *method_name(char *buf, size_t size, int i)
{
	snprintf(buf, size,
		 "Lcom/example/app/Service;method%d(Ljava/lang/String;)V", i);
	return buf;
}

/*
 * Every kind of write the file backends make: loads with and without a
 * line table and unwind information, moves, unloads, and batches (several
 * lines in one write). The same calls every run; the number that failed.
 */
static int workload(struct perfinject *pi)
{
	struct perfinject_code_op ops[8];
	char name[96], names[4][sizeof(name)];
	int i, k, rc, bad = 0;
	unsigned int s, b;

	for (i = 0; i < 2000; i++) {
		s = i % SLOTS;
		if (i >= SLOTS)
			bad += perfinject__unload(pi, slot(s)) != 0;
		method_name(name, sizeof(name), i);
		if (i % 16 == 0) {
			lines[0].addr = slot(s);
			lines[1].addr = slot(s) + 16;
			PERFINJECT_LOAD_OPTS(lo, .lines = lines, .nr_lines = 2,
					     .eh_frame = eh_frame,
					     .eh_frame_sz = sizeof(eh_frame),
					     .eh_frame_hdr = eh_frame_hdr,
					     .eh_frame_hdr_sz = sizeof(eh_frame_hdr));

			rc = perfinject__load_opts(pi, name, slot(s), SLOT_SZ,
						   0, &lo);
		} else {
			rc = perfinject__load(pi, name, slot(s), SLOT_SZ, 0);
		}
		bad += rc != 0;
		if (i % 32 == 5) {
			bad += perfinject__move(pi, slot(s),
						slot(SLOTS + s)) != 0;
			bad += perfinject__move(pi, slot(SLOTS + s),
						slot(s)) != 0;
		}
		if (i % 100 != 99)
			continue;
		memset(ops, 0, sizeof(ops));
		for (k = 0; k < 4; k++) {
			b = (s + SLOTS - 1 - k) % SLOTS;
			ops[2 * k].op = PERFINJECT_OP_UNLOAD;
			ops[2 * k].addr = slot(b);
			ops[2 * k + 1].op = PERFINJECT_OP_LOAD;
			ops[2 * k + 1].addr = slot(b);
			ops[2 * k + 1].len = SLOT_SZ;
			ops[2 * k + 1].name = method_name(names[k], sizeof(name),
							  i * 10 + k);
		}
		bad += perfinject__batch(pi, ops, 8) != 8;
	}
	return bad;
}

static char map_path[PATH_MAX], dump_path[PATH_MAX];
static char ref_map[PATH_MAX], ref_dump[PATH_MAX];

/*
 * A handle, the workload, the handle freed: the number of calls that
 * failed, or perfinject__new()'s error.
 */
static int run(unsigned int flags, enum fault_mode how, size_t *count)
{
	PERFINJECT_OPTS(opts, .backends = PERFINJECT_BACKEND_PERFMAP |
			PERFINJECT_BACKEND_JITDUMP,
			.flags = PERFINJECT_F_NO_ENV | flags, .dir = t_tmpdir());
	struct perfinject *pi;
	int bad;

	warnings = 0;
	map_warnings = 0;
	dump_warnings = 0;
	*count = 0;
	unlink(map_path);
	unlink(dump_path);
	mode = how;
	pi = perfinject__new(&opts);
	if (!pi) {
		mode = FAULT_NONE;
		return -errno;
	}
	bad = workload(pi);
	*count = perfinject__count(pi);
	perfinject__free(pi);
	mode = FAULT_NONE;
	return bad;
}

/*
 * The jitdump at @path, framed exactly to its end (an empty file too),
 * with what differs between two runs of the same calls made equal:
 * timestamps zeroed, code indices counted from the first LOAD's (the
 * library numbers them across handles). NULL if torn.
 */
static char *jitdump_norm(const char *path, size_t *len, int *records)
{
	uint64_t base = 0, index;
	uint32_t id, size;
	bool seen = false;
	char *buf, *idx;
	size_t at;

	*len = 0;
	*records = 0;
	buf = t_slurp(path, len);
	if (!buf || !*len)
		return buf;
	if (*len < 40 || t_rd32(buf) != 0x4A695444)
		goto torn;
	memset(buf + 24, 0, 8);
	for (at = t_rd32(buf + 8); at + 16 <= *len; at += size) {
		id = t_rd32(buf + at);
		size = t_rd32(buf + at + 4);
		if (size < 16 || size > *len - at)
			goto torn;
		memset(buf + at + 8, 0, 8);
		idx = NULL;
		if (id == T_JIT_CODE_LOAD && size >= 56)
			idx = buf + at + 48;
		else if (id == T_JIT_CODE_MOVE && size >= 64)
			idx = buf + at + 56;
		if (idx) {
			if (!seen)
				base = t_rd64(idx);
			seen = true;
			index = t_rd64(idx) - base;
			memcpy(idx, &index, sizeof(index));
		}
		(*records)++;
	}
	if (at == *len)
		return buf;
torn:
	free(buf);
	return NULL;
}

/* @a (of @alen bytes) begins with all of @b. */
static bool has_prefix(const char *a, size_t alen, const char *b, size_t blen)
{
	return a && b && blen <= alen && !memcmp(a, b, blen);
}

static void check_eintr(void)
{
	size_t count, len, ref_len, dump_len, ref_dump_len;
	int bad, i, r, records, ref_records;
	char *map, *ref, *dump, *rdump;

	ref = t_slurp(ref_map, &ref_len);
	rdump = jitdump_norm(ref_dump, &ref_dump_len, &ref_records);
	for (r = 0; r < EINTR_ROUNDS; r++) {
		bad = run(PERFINJECT_F_STRICT, FAULT_EINTR, &count);
		if (bad < 0) {
			CHECK(0, "round %d: new: %s", r, strerror(-bad));
			continue;
		}
		CHECK(bad == 0 && count == SLOTS,
		      "round %d: %d calls failed, %zu entries", r, bad, count);
		CHECK(warnings == 0, "round %d: %d warnings (the last: %s)",
		      r, warnings, last_warning);

		map = t_slurp(map_path, &len);
		CHECK(map && ref && len == ref_len && !memcmp(map, ref, len),
		      "round %d: the perf map differs from the run without signals (%zu bytes, %zu without)",
		      r, len, ref_len);
		dump = jitdump_norm(dump_path, &dump_len, &records);
		CHECK(dump && rdump && dump_len == ref_dump_len &&
		      !memcmp(dump, rdump, dump_len),
		      "round %d: the jitdump differs from the run without signals (%d records, %d without)",
		      r, records, ref_records);
		free(map);
		free(dump);
	}
	printf("eintr: %d rounds, %lu calls, %lu EINTRs injected (at most %lu in a row)\n",
	       EINTR_ROUNDS,
	       calls[CALL_WRITE] + calls[CALL_WRITEV] + calls[CALL_LOCKW],
	       eintrs[CALL_WRITE] + eintrs[CALL_WRITEV] + eintrs[CALL_LOCKW],
	       longest_run);
	for (i = 0; i < NR_CALLS; i++) {
		printf("  %-20s %6lu calls, %6lu EINTR\n", call_names[i],
		       calls[i], eintrs[i]);
		CHECK(eintrs[i] > 0, "no EINTR injected into %s",
		      call_names[i]);
	}
	CHECK(longest_run >= 3, "at most %lu EINTRs in a row", longest_run);
	free(ref);
	free(rdump);
}

static void check_disk_full(unsigned long ref_writes)
{
	int bad, r, records, ref_records, nr_map_hit = 0, nr_dump_hit = 0;
	size_t count, len, ref_len, dump_len, ref_dump_len;
	char *map, *ref, *dump, *rdump;

	ref = t_slurp(ref_map, &ref_len);
	rdump = jitdump_norm(ref_dump, &ref_dump_len, &ref_records);
	for (r = 0; r < DISK_FULL_ROUNDS; r++) {
		memset(fd_hit, 0, sizeof(fd_hit));
		map_hit = false;
		dump_hit = false;
		nr_writes = 0;
		/* The jitdump's header, its CLOSE record, or anywhere. */
		full_at = r == 0 ? 1 : r == 1 ? ref_writes :
			  1 + rnd(ref_writes);
		bad = run(0, FAULT_DISK_FULL, &count);
		CHECK(!bad && count == SLOTS,
		      "disk full at write %lu: %d calls failed, %zu entries",
		      full_at, bad, count);
		CHECK(warnings == map_hit + dump_hit &&
		      map_warnings == map_hit && dump_warnings == dump_hit,
		      "disk full at write %lu: %d warnings (perf map %d, jitdump %d; the last: %s), want one per file written after",
		      full_at, warnings, map_warnings, dump_warnings,
		      last_warning);
		nr_map_hit += map_hit;
		nr_dump_hit += dump_hit;

		map = t_slurp(map_path, &len);
		CHECK(has_prefix(ref, ref_len, map, len) &&
		      (!len || map[len - 1] == '\n'),
		      "disk full at write %lu: the perf map (%zu bytes) is not whole lines of the run without faults",
		      full_at, len);
		dump = jitdump_norm(dump_path, &dump_len, &records);
		CHECK(has_prefix(rdump, ref_dump_len, dump, dump_len),
		      "disk full at write %lu: the jitdump (%zu bytes) is %s",
		      full_at, dump_len, dump ?
		      "not the start of the run without faults" : "torn");
		free(map);
		free(dump);
	}
	printf("disk full: %d rounds, at one of %lu writes\n",
	       DISK_FULL_ROUNDS, ref_writes);
	printf("  %lu short writes, %lu ENOSPC injected\n", shorts, enospcs);
	printf("  files hit: perf map %d times, jitdump %d times\n",
	       nr_map_hit, nr_dump_hit);
	CHECK(nr_map_hit && nr_dump_hit && shorts,
	      "the faults missed a file: perf map %d, jitdump %d, %lu short",
	      nr_map_hit, nr_dump_hit, shorts);
	free(ref);
	free(rdump);
}

int main(int argc, char **argv)
{
	unsigned long ref_writes;
	struct timespec t0, t1;
	size_t count;
	int bad;

	if (argc > 1)
		rng = strtoull(argv[1], NULL, 0) | 1;
	printf("seed %#llx\n", (unsigned long long)rng);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	perfinject_set_print(count_warnings);
	memset(code, 0xc3, sizeof(code));
	snprintf(map_path, sizeof(map_path), "%s/perf-%d.map", t_tmpdir(),
		 getpid());
	snprintf(dump_path, sizeof(dump_path), "%s/jit-%d.dump", t_tmpdir(),
		 getpid());
	snprintf(ref_map, sizeof(ref_map), "%s/ref.map", t_tmpdir());
	snprintf(ref_dump, sizeof(ref_dump), "%s/ref.dump", t_tmpdir());

	/* What the calls write when nothing goes wrong. */
	bad = run(PERFINJECT_F_STRICT, FAULT_NONE, &count);
	if (bad == -EPERM)
		SKIP("no executable mapping of a file in %s (noexec?)",
		     t_tmpdir());
	CHECK_EQ(bad, 0);
	CHECK_EQ(count, SLOTS);
	CHECK_EQ(warnings, 0);
	ref_writes = calls[CALL_WRITE] + calls[CALL_WRITEV];
	if (bad || rename(map_path, ref_map) || rename(dump_path, ref_dump))
		return t_done();
	memset(calls, 0, sizeof(calls));

	check_eintr();
	check_disk_full(ref_writes);

	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.2f s\n", (t1.tv_sec - t0.tv_sec) +
	       (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return t_done();
}
