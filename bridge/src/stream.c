// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Tracked files: which FILE and fd write a perf map or jitdump of this
 * process, what their parsers have seen, and the self-check that catches
 * bytes written through paths no hook sees.
 *
 * Lock order: br_table_lock, the FILE's lock (flockfile), the stream's
 * lock, the tree lock (ranges.c), libperfinject's locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bridge.h"

struct br_stream br_streams[BR_MAX_STREAMS];
unsigned int br_nr_active;
unsigned int br_nr_slots;
bool br_no_files;

/* Serialises adding and removing streams (not their use). */
static pthread_mutex_t br_table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t br_fork_once = PTHREAD_ONCE_INIT;
static bool br_warned_full;

/* Bytes of a stream's buffers: the parser's and the checkpoint's. */
#define BR_BUF_SIZE	(BR_LINE_MAX + 1)

/* No-files mode: check and free a memory file's pages this often. */
#define BR_TICK		(256 * 1024)

/* Whether @fd is a tracked file's, whoever asks. */
static bool br_fd_tracked(int fd)
{
	unsigned int i, n = __atomic_load_n(&br_nr_slots, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++)
		if (__atomic_load_n(&br_streams[i].fd, __ATOMIC_RELAXED) == fd &&
		    __atomic_load_n(&br_streams[i].active, __ATOMIC_RELAXED))
			return true;
	return false;
}

static void br_vsay(const char *prefix, const char *fmt, va_list ap)
{
	char msg[640];
	int n, saved = errno;
	size_t len;

	/* Never into the runtime's own file (stderr reopened onto it). */
	if (br_fd_tracked(2))
		goto out;
	n = snprintf(msg, sizeof(msg), "perfinject-bridge: %s", prefix);
	if (n < 0)
		goto out;
	len = n;
	n = vsnprintf(msg + len, sizeof(msg) - len, fmt, ap);
	if (n < 0)
		goto out;
	len += n;
	if (len >= sizeof(msg) - 1)
		len = sizeof(msg) - 2;
	if (msg[len - 1] != '\n')
		msg[len++] = '\n';
	syscall(SYS_write, 2, msg, len);
out:
	errno = saved;
}

void br_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	br_vsay("", fmt, ap);
	va_end(ap);
}

void br_stream_say(struct br_stream *s, const char *fmt, ...)
{
	char prefix[64];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "%s (fd %d): ", s->name, s->fd);
	va_start(ap, fmt);
	br_vsay(prefix, fmt, ap);
	va_end(ap);
}

/*
 * The stream stops forwarding; the runtime goes on. Called with the
 * stream's lock held.
 */
void br_stream_fail(struct br_stream *s, const char *why)
{
	if (s->failed)
		return;
	s->failed = true;
	br_stream_say(s, "stopped forwarding: %s", why);
}

/* Lock @s and check it still is the stream of @fp (or of @fd). */
bool br_stream_confirm(struct br_stream *s, FILE *fp, int fd)
{
	pthread_mutex_lock(&s->lock);
	if (s->active && (fp ? s->fp == fp : s->fd == fd))
		return true;
	pthread_mutex_unlock(&s->lock);
	return false;
}

/* The runtime wrote @len bytes at the stream's position; @s is locked. */
void br_stream_feed(struct br_stream *s, const void *data, size_t len)
{
	int err;

	if (s->failed || !len)
		goto out;
	err = br_parse(s, data, len);
	if (err)
		br_stream_fail(s, err == -EBADMSG ? "malformed jitdump" :
				  err == -EPROTONOSUPPORT ?
				  "jitdump of the other byte order" :
				  "libperfinject did not take an entry");
	if (s->parser.refused && !s->refused) {
		s->refused = true;
		br_stream_say(s, "the kernel refused an entry (past the end of user space?); going on without it");
	}
out:
	s->seen += len;
}

void br_stream_feedv(struct br_stream *s, const struct iovec *iov, int iovcnt,
		     size_t len)
{
	int i;

	for (i = 0; i < iovcnt && len; i++) {
		size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;

		br_stream_feed(s, iov[i].iov_base, n);
		len -= n;
	}
}

/*
 * The runtime wrote @len bytes at @off. The parser follows the file in
 * order: the next bytes are taken, a rewrite of bytes already parsed is
 * ignored, a hole cannot be followed.
 */
void br_stream_pwrite(struct br_stream *s, const struct iovec *iov,
		      int iovcnt, size_t len, off_t off)
{
	uint64_t at = s->base + s->seen;

	s->pwritten = true;
	/* Linux appends positioned writes to O_APPEND files. */
	if (s->appending || (uint64_t)off == at)
		br_stream_feedv(s, iov, iovcnt, len);
	else if ((uint64_t)off + len > at)
		br_stream_fail(s, "positioned writes out of order");
}

/*
 * Open the file for reading, whatever the runtime opened it for: the
 * descriptor's own file, even if its name is gone.
 */
static int br_reopen(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return br_real.open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
}

/*
 * The self-check found that the file is at @pos while the parser saw
 * less (or more): bytes went through a path no hook sees. Go back to the
 * last good check and parse from the file instead, up to @pos.
 */
static void br_recover(struct br_stream *s, int fd, uint64_t pos)
{
	uint64_t at = s->base + s->ckpt_seen;
	char buf[4096];
	int rfd;

	if (!s->warned) {
		s->warned = true;
		br_stream_say(s, "%lld bytes went through calls the bridge does not see; reading them from the file",
			      (long long)(pos - (s->base + s->seen)));
	}
	if (pos < at) {
		br_stream_fail(s, "the file went back");
		return;
	}
	rfd = br_reopen(fd);
	if (rfd < 0) {
		br_stream_fail(s, "cannot read the file back");
		return;
	}
	br_parser_copy(&s->parser, &s->ckpt);
	s->seen = s->ckpt_seen;
	while (at < pos && !s->failed) {
		size_t want = pos - at < sizeof(buf) ? pos - at : sizeof(buf);
		ssize_t n = pread(rfd, buf, want, at);

		if (n < 0) {
			br_stream_fail(s, "cannot read the file back");
			break;
		}
		/* Short: the next check takes the rest. */
		if (!n)
			break;
		br_stream_feed(s, buf, n);
		at += n;
	}
	br_real.close(rfd);
}

static void br_checkpoint(struct br_stream *s)
{
	br_parser_copy(&s->ckpt, &s->parser);
	s->ckpt_seen = s->seen;
}

/*
 * Compare what the parser saw with where the FILE is (ftello counts
 * what is still in its buffer). @fp is locked, and so is @s. On a
 * mismatch the buffer goes to the file first, as the runtime's fflush
 * or fclose was about to do anyway.
 */
static void br_check_file(struct br_stream *s, FILE *fp)
{
	int saved = errno;
	off_t pos;

	if (s->failed || !s->checkable)
		goto out;
	pos = ftello(fp);
	if (pos < 0)
		goto out;
	if ((uint64_t)pos != s->base + s->seen) {
		br_real.fflush(fp);
		br_recover(s, fileno(fp), pos);
	}
	if (!s->failed)
		br_checkpoint(s);
out:
	errno = saved;
}

/* The same for a stream written through its fd only, before close(). */
static void br_check_fd(struct br_stream *s)
{
	int saved = errno;
	struct stat st;
	off_t pos;

	if (s->failed || !s->checkable || s->pwritten || s->fd < 0)
		goto out;
	if (s->appending) {
		if (fstat(s->fd, &st))
			goto out;
		pos = st.st_size;
	} else {
		pos = lseek(s->fd, 0, SEEK_CUR);
		if (pos < 0)
			goto out;
	}
	if ((uint64_t)pos != s->base + s->seen)
		br_recover(s, s->fd, pos);
out:
	errno = saved;
}

/*
 * After the runtime wrote to a memory file (no-files mode), every
 * BR_TICK bytes: run the self-check, then give back the pages of what
 * it confirmed and of what reached the file since. @s is locked, and
 * so is @fp when the write went through it.
 */
void br_stream_tick(struct br_stream *s, FILE *fp)
{
	int saved = errno;
	uint64_t limit;
	off_t pos;

	if (!s->memory || s->seen - s->ckpt_seen < BR_TICK || s->fd < 0)
		return;
	if (s->parser.kind != BR_SINK && !s->failed) {
		if (fp && s->fp == fp) {
			br_check_file(s, fp);
		} else if (!s->fp) {
			br_check_fd(s);
			if (!s->failed)
				br_checkpoint(s);
		} else {
			/* The FILE's own writes check it. */
			return;
		}
	}
	pos = lseek(s->fd, 0, SEEK_CUR);
	limit = pos < 0 ? 0 : (uint64_t)pos;
	/* Bytes not yet confirmed may have to be read back. */
	if (s->parser.kind != BR_SINK && !s->failed &&
	    limit > s->base + s->ckpt_seen)
		limit = s->base + s->ckpt_seen;
	limit &= ~(uint64_t)4095;
	if (limit > s->punched &&
	    !fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		       s->punched, limit - s->punched))
		s->punched = limit;
	if (s->parser.kind == BR_SINK || s->failed)
		s->ckpt_seen = s->seen;
	errno = saved;
}

/* Free a slot; called with br_table_lock and the slot's lock held. */
static void br_untrack(struct br_stream *s)
{
	char *buf = s->parser.buf;

	__atomic_store_n(&s->fp, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&s->fd, -1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->active, false, __ATOMIC_RELAXED);
	s->parser.buf = NULL;
	s->ckpt.buf = NULL;
	br_parser_release(&s->parser);
	br_parser_release(&s->ckpt);
	__atomic_sub_fetch(&br_nr_active, 1, __ATOMIC_RELEASE);
	free(buf);
}

static void br_atfork_child(void)
{
	unsigned int i;

	/* Every stream is the parent's; locks may be held by threads gone. */
	pthread_mutex_init(&br_table_lock, NULL);
	for (i = 0; i < br_nr_slots; i++) {
		struct br_stream *s = &br_streams[i];

		pthread_mutex_init(&s->lock, NULL);
		if (s->active)
			br_untrack(s);
	}
	br_nr_active = 0;
	br_ranges_atfork_child();
}

static void br_fork_register(void)
{
	pthread_atfork(NULL, NULL, br_atfork_child);
}

/*
 * V8's log of an isolate, "isolate-0xADDR-PID-v8.log" (the tail is its
 * --logfile): Node's --perf-basic-prof and --perf-prof turn it on in the
 * working directory, and no-files mode keeps it in memory too.
 */
static bool br_match_v8_log(const char *base)
{
	char pid[16];
	size_t n;

	if (strncmp(base, "isolate-0x", 10))
		return false;
	base += 10;
	n = strspn(base, "0123456789abcdefABCDEF");
	if (!n)
		return false;
	snprintf(pid, sizeof(pid), "-%d-", getpid());
	return !strncmp(base + n, pid, strlen(pid));
}

/* The basename @path must have to be ours: perf-PID.map, jit-PID.dump. */
static bool br_match(const char *path, enum br_kind *kind, char *name,
		     size_t name_sz)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (base[0] != 'p' && base[0] != 'j' && base[0] != 'i')
		return false;
	if (!strncmp(base, "perf-", 5)) {
		*kind = BR_PERFMAP;
		snprintf(name, name_sz, "perf-%d.map", getpid());
	} else if (!strncmp(base, "jit-", 4)) {
		*kind = BR_JITDUMP;
		snprintf(name, name_sz, "jit-%d.dump", getpid());
	} else if (br_no_files && br_match_v8_log(base)) {
		*kind = BR_SINK;
		snprintf(name, name_sz, "V8 log");
		return true;
	} else {
		return false;
	}
	return !strcmp(base, name);
}

/*
 * A new file got @fd: whatever had it was closed where no hook saw it
 * (a FILE with it too, most likely). Called with br_table_lock held.
 */
static void br_drop_fd(int fd)
{
	unsigned int i;

	for (i = 0; i < br_nr_slots; i++) {
		struct br_stream *s = &br_streams[i];

		if (s->fd != fd || !s->active)
			continue;
		pthread_mutex_lock(&s->lock);
		br_untrack(s);
		pthread_mutex_unlock(&s->lock);
	}
}

/*
 * Start tracking a file the runtime just opened for writing. Called with
 * br_table_lock held.
 */
static struct br_stream *br_track(enum br_kind kind, const char *name,
				  FILE *fp, int fd, bool appending,
				  int64_t base, bool memory)
{
	struct br_stream *s = NULL;
	unsigned int i;
	char *buf;

	pthread_once(&br_fork_once, br_fork_register);
	for (i = 0; i < br_nr_slots && !s; i++)
		if (!br_streams[i].active)
			s = &br_streams[i];
	if (!s && br_nr_slots < BR_MAX_STREAMS) {
		s = &br_streams[br_nr_slots];
		pthread_mutex_init(&s->lock, NULL);
		s->fp = NULL;
		s->fd = -1;
	}
	if (!s) {
		if (!br_warned_full)
			br_say("more than %d files open; not forwarding %s",
			       BR_MAX_STREAMS, name);
		br_warned_full = true;
		return NULL;
	}
	buf = malloc(2 * BR_BUF_SIZE);
	if (!buf) {
		br_say("out of memory; not forwarding %s", name);
		return NULL;
	}
	pthread_mutex_lock(&s->lock);
	s->failed = false;
	s->warned = false;
	s->refused = false;
	s->checkable = base >= 0;
	s->appending = appending;
	s->pwritten = false;
	s->memory = memory;
	s->punched = 0;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->base = base >= 0 ? base : 0;
	s->seen = 0;
	s->ckpt_seen = 0;
	br_parser_init(&s->parser, kind, buf);
	br_parser_init(&s->ckpt, kind, buf + BR_BUF_SIZE);
	__atomic_store_n(&s->fd, fd, __ATOMIC_RELAXED);
	__atomic_store_n(&s->fp, fp, __ATOMIC_RELAXED);
	__atomic_store_n(&s->active, true, __ATOMIC_RELAXED);
	if (s == &br_streams[br_nr_slots])
		__atomic_store_n(&br_nr_slots, br_nr_slots + 1,
				 __ATOMIC_RELEASE);
	__atomic_add_fetch(&br_nr_active, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->lock);
	return s;
}

static bool br_write_flags(int flags)
{
	int acc = flags & O_ACCMODE;

	return !(flags & O_PATH) && (acc == O_WRONLY || acc == O_RDWR);
}

/* "w", "a", "r+" and the like, with glibc's extra letters after. */
static bool br_write_mode(const char *mode)
{
	const char *p;

	if (!mode)
		return false;
	if (mode[0] == 'w' || mode[0] == 'a')
		return true;
	for (p = mode; *p && *p != ','; p++)
		if (*p == '+')
			return true;
	return false;
}

/* After a successful call of the open family. */
void br_after_open(const char *path, int flags, int fd)
{
	int saved = errno;
	enum br_kind kind;
	char name[32];
	struct stat st;
	int64_t base;

	if (fd < 0 || br_busy)
		return;
	br_enter();
	pthread_mutex_lock(&br_table_lock);
	/* The fd was closed where no hook saw it: what we had is stale. */
	if (br_nr_active)
		br_drop_fd(fd);
	if (!path || !br_write_flags(flags) ||
	    !br_match(path, &kind, name, sizeof(name)))
		goto out;
	if (flags & O_APPEND)
		base = fstat(fd, &st) ? -1 : st.st_size;
	else
		base = lseek(fd, 0, SEEK_CUR);
	br_track(kind, name, NULL, fd, flags & O_APPEND, base, false);
out:
	pthread_mutex_unlock(&br_table_lock);
	br_leave();
	errno = saved;
}

/*
 * No-files mode: a memory file in place of the file @path names, tracked
 * from the start, or -1 (a message said why). Called with br_table_lock
 * held, inside br_enter().
 */
static int br_memfd(const char *path, bool cloexec, bool appending,
		    const char *name)
{
	int fd = memfd_create(name, cloexec ? MFD_CLOEXEC : 0);

	if (fd < 0) {
		br_say("cannot keep %s in memory (%s); writing %s", name,
		       strerror(errno), path);
		return -1;
	}
	if (appending)
		fcntl(fd, F_SETFL, O_APPEND);
	if (br_nr_active)
		br_drop_fd(fd);
	return fd;
}

/*
 * Before the open family: in no-files mode, a file of ours opened for
 * writing becomes a memory file. Returns its fd, or BR_NOT_MEMORY: open
 * @path as asked.
 */
int br_open_memory(const char *path, int flags)
{
	int saved = errno, fd = BR_NOT_MEMORY;
	enum br_kind kind;
	char name[32];

	if (!br_no_files || br_busy || !path || !br_write_flags(flags) ||
	    !br_match(path, &kind, name, sizeof(name)))
		return BR_NOT_MEMORY;
	br_enter();
	pthread_mutex_lock(&br_table_lock);
	fd = br_memfd(path, flags & O_CLOEXEC, flags & O_APPEND, name);
	if (fd >= 0)
		br_track(kind, name, NULL, fd, flags & O_APPEND, 0, true);
	else
		fd = BR_NOT_MEMORY;
	pthread_mutex_unlock(&br_table_lock);
	br_leave();
	errno = saved;
	return fd;
}

/*
 * The same before fopen() and fopen64(): @done says whether the call is
 * made, and then the memory file's FILE, or NULL with errno set, is the
 * result.
 */
FILE *br_fopen_memory(const char *path, const char *mode, bool *done)
{
	int saved = errno, fd;
	enum br_kind kind;
	char name[32];
	FILE *fp = NULL;

	*done = false;
	if (!br_no_files || br_busy || !path || !br_write_mode(mode) ||
	    !br_match(path, &kind, name, sizeof(name)))
		return NULL;
	br_resolve();
	br_enter();
	pthread_mutex_lock(&br_table_lock);
	fd = br_memfd(path, strchr(mode, 'e'), mode[0] == 'a', name);
	if (fd >= 0) {
		*done = true;
		fp = br_real.fdopen(fd, mode);
		if (fp) {
			br_track(kind, name, fp, fd, mode[0] == 'a', 0, true);
		} else {
			saved = errno;
			br_real.close(fd);
		}
	}
	pthread_mutex_unlock(&br_table_lock);
	br_leave();
	errno = saved;
	return fp;
}

/* After fopen(), fopen64(), freopen(), freopen64() returned @fp. */
void br_after_fopen(const char *path, const char *mode, FILE *fp)
{
	int saved = errno;
	enum br_kind kind;
	char name[32];
	int fd;

	if (!fp || br_busy)
		return;
	br_enter();
	pthread_mutex_lock(&br_table_lock);
	fd = fileno(fp);
	if (br_nr_active && fd >= 0)
		br_drop_fd(fd);
	if (path && br_write_mode(mode) &&
	    br_match(path, &kind, name, sizeof(name)))
		br_track(kind, name, fp, fd, mode[0] == 'a', ftello(fp),
			 false);
	pthread_mutex_unlock(&br_table_lock);
	br_leave();
	errno = saved;
}

/*
 * @fp writes @fd, which no hook saw opened (or whose FILE was reopened
 * with freopen(NULL, ...)): recognise the file by its path. Called with
 * br_table_lock held.
 */
static void br_track_fd_path(int fd, FILE *fp)
{
	char link[64], path[PATH_MAX];
	enum br_kind kind;
	char name[32];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return;
	path[n] = '\0';
	if (br_match(path, &kind, name, sizeof(name)))
		br_track(kind, name, fp, fd, fcntl(fd, F_GETFL) & O_APPEND,
			 ftello(fp), false);
}

/* After fdopen(): the FILE writes the tracked fd's file. */
void br_after_fdopen(int fd, const char *mode, FILE *fp)
{
	struct br_stream *s = NULL;
	int saved = errno;
	unsigned int i;

	if (!fp || br_busy || !br_write_mode(mode))
		return;
	br_enter();
	pthread_mutex_lock(&br_table_lock);
	for (i = 0; i < br_nr_slots && !s; i++)
		if (br_streams[i].active && br_streams[i].fd == fd)
			s = &br_streams[i];
	if (s) {
		pthread_mutex_lock(&s->lock);
		__atomic_store_n(&s->fp, fp, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&s->lock);
	} else {
		br_track_fd_path(fd, fp);
	}
	pthread_mutex_unlock(&br_table_lock);
	br_leave();
	errno = saved;
}

/* After freopen(): a new file or, with no path, the same one reopened. */
void br_after_freopen(const char *path, const char *mode, FILE *fp)
{
	int saved = errno;

	if (path) {
		br_after_fopen(path, mode, fp);
		return;
	}
	if (!fp || br_busy || !br_write_mode(mode))
		return;
	br_enter();
	pthread_mutex_lock(&br_table_lock);
	br_track_fd_path(fileno(fp), fp);
	pthread_mutex_unlock(&br_table_lock);
	br_leave();
	errno = saved;
}

/*
 * After fflush(@fp) of @s, found by br_find_file(); the caller has held
 * @fp's lock since before the flush.
 */
void br_after_fflush(struct br_stream *s, FILE *fp)
{
	if (!br_stream_confirm(s, fp, -1))
		return;
	br_check_file(s, fp);
	pthread_mutex_unlock(&s->lock);
}

/*
 * After fflush(NULL) or fcloseall(): check every tracked FILE. One that another thread
 * holds locked is left for its next flush (that thread may be waiting
 * for a lock this one holds).
 */
void br_after_fflush_all(void)
{
	int saved = errno;
	unsigned int i;

	if (br_busy || !__atomic_load_n(&br_nr_active, __ATOMIC_ACQUIRE))
		return;
	br_enter();
	if (pthread_mutex_trylock(&br_table_lock))
		goto out;
	for (i = 0; i < br_nr_slots; i++) {
		struct br_stream *s = &br_streams[i];
		FILE *fp = s->fp;

		if (!s->active || !fp || ftrylockfile(fp))
			continue;
		pthread_mutex_lock(&s->lock);
		if (s->active && s->fp == fp)
			br_check_file(s, fp);
		pthread_mutex_unlock(&s->lock);
		funlockfile(fp);
	}
	pthread_mutex_unlock(&br_table_lock);
out:
	br_leave();
	errno = saved;
}

/* Before fclose(@fp), and before freopen() replaces its file. */
void br_before_fclose(FILE *fp)
{
	int saved = errno;
	unsigned int i;

	if (br_busy || !__atomic_load_n(&br_nr_active, __ATOMIC_ACQUIRE))
		return;
	br_enter();
	pthread_mutex_lock(&br_table_lock);
	for (i = 0; i < br_nr_slots; i++) {
		struct br_stream *s = &br_streams[i];

		if (!s->active || s->fp != fp)
			continue;
		flockfile(fp);
		pthread_mutex_lock(&s->lock);
		br_check_file(s, fp);
		br_untrack(s);
		pthread_mutex_unlock(&s->lock);
		funlockfile(fp);
	}
	pthread_mutex_unlock(&br_table_lock);
	br_leave();
	errno = saved;
}

/* Before close(), or dup2() onto @fd. */
void br_before_close(int fd)
{
	br_before_close_range(fd, fd);
}

/* Before close_range() or closefrom(): every fd in [@first, @last]. */
void br_before_close_range(unsigned int first, unsigned int last)
{
	int saved = errno;
	unsigned int i;

	if (br_busy || !__atomic_load_n(&br_nr_active, __ATOMIC_ACQUIRE))
		return;
	br_enter();
	pthread_mutex_lock(&br_table_lock);
	for (i = 0; i < br_nr_slots; i++) {
		struct br_stream *s = &br_streams[i];

		if (!s->active || s->fd < 0 || (unsigned int)s->fd < first ||
		    (unsigned int)s->fd > last)
			continue;
		pthread_mutex_lock(&s->lock);
		if (s->fp) {
			/* The FILE's fd closed under it; its writes fail. */
			s->fd = -1;
		} else {
			br_check_fd(s);
			br_untrack(s);
		}
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_unlock(&br_table_lock);
	br_leave();
	errno = saved;
}
