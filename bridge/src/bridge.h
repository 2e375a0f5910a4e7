/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libperfinject-bridge: the parts shared by the hooks (hooks.c), the
 * stream table (stream.c), the parsers (parse.c) and the live ranges
 * (ranges.c).
 */
#ifndef __PERFINJECT_BRIDGE_H
#define __PERFINJECT_BRIDGE_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

#define BR_EXPORT	__attribute__((visibility("default")))

/* The libc functions the bridge calls on the runtime's behalf. */
struct br_real {
	int (*open)(const char *path, int flags, ...);
	int (*open64)(const char *path, int flags, ...);
	int (*openat)(int dirfd, const char *path, int flags, ...);
	int (*openat64)(int dirfd, const char *path, int flags, ...);
	int (*open_2)(const char *path, int flags);
	int (*open64_2)(const char *path, int flags);
	int (*openat_2)(int dirfd, const char *path, int flags);
	int (*openat64_2)(int dirfd, const char *path, int flags);
	int (*creat)(const char *path, mode_t mode);
	int (*creat64)(const char *path, mode_t mode);
	FILE *(*fopen)(const char *path, const char *mode);
	FILE *(*fopen64)(const char *path, const char *mode);
	FILE *(*freopen)(const char *path, const char *mode, FILE *fp);
	FILE *(*freopen64)(const char *path, const char *mode, FILE *fp);
	FILE *(*fdopen)(int fd, const char *mode);
	size_t (*fwrite)(const void *ptr, size_t size, size_t n, FILE *fp);
	size_t (*fwrite_unlocked)(const void *ptr, size_t size, size_t n,
				  FILE *fp);
	int (*fputs)(const char *s, FILE *fp);
	int (*fputs_unlocked)(const char *s, FILE *fp);
	int (*fputc)(int c, FILE *fp);
	int (*putc)(int c, FILE *fp);
	int (*fputc_unlocked)(int c, FILE *fp);
	int (*putc_unlocked)(int c, FILE *fp);
	int (*io_putc)(int c, FILE *fp);
	int (*vfprintf)(FILE *fp, const char *fmt, va_list ap);
	int (*vfprintf_chk)(FILE *fp, int flag, const char *fmt, va_list ap);
	int (*vdprintf)(int fd, const char *fmt, va_list ap);
	int (*vdprintf_chk)(int fd, int flag, const char *fmt, va_list ap);
	ssize_t (*write)(int fd, const void *buf, size_t n);
	ssize_t (*writev)(int fd, const struct iovec *iov, int iovcnt);
	ssize_t (*pwrite)(int fd, const void *buf, size_t n, off_t off);
	ssize_t (*pwrite64)(int fd, const void *buf, size_t n, off_t off);
	ssize_t (*pwritev)(int fd, const struct iovec *iov, int iovcnt,
			   off_t off);
	ssize_t (*pwritev64)(int fd, const struct iovec *iov, int iovcnt,
			     off_t off);
	int (*fflush)(FILE *fp);
	int (*fflush_unlocked)(FILE *fp);
	int (*fclose)(FILE *fp);
	int (*fcloseall)(void);
	int (*close)(int fd);
	int (*dup2)(int oldfd, int newfd);
	int (*dup3)(int oldfd, int newfd, int flags);
	int (*close_range)(unsigned int first, unsigned int last, int flags);
	void (*closefrom)(int lowfd);
};

extern struct br_real br_real;
void br_resolve(void);

/*
 * Set while the bridge works on a thread's behalf: a hook entered then
 * (from libperfinject, or from a signal handler) goes straight to libc.
 */
extern __thread unsigned int br_busy __attribute__((tls_model("initial-exec")));

static inline void br_enter(void)
{
	br_busy++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void br_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	br_busy--;
}

enum br_kind {
	BR_PERFMAP,	/* perf-PID.map: "START SIZE name\n" lines */
	BR_JITDUMP,	/* jit-PID.dump: header, then framed records */
	BR_SINK,	/* no-files mode: a side file kept in memory, unread */
};

/* Longest perf-map line kept; the name in it is cut to BR_NAME_MAX. */
#define BR_LINE_MAX	8192
/* Longest name forwarded (libperfinject's limit without the NUL). */
#define BR_NAME_MAX	4095

/*
 * The largest jitdump DEBUG_INFO or UNWINDING_INFO record body kept for
 * the LOAD that follows it: the kernel takes line tables up to 1 MiB
 * and unwind information up to 64 KiB; a bigger record is skipped.
 */
#define BR_DATA_MAX	(2U << 20)

/* The records a jitdump LOAD may come after, kept for it. */
enum br_data {
	BR_DATA_DEBUG,		/* JIT_CODE_DEBUG_INFO: source lines */
	BR_DATA_UNWIND,		/* JIT_CODE_UNWINDING_INFO: .eh_frame */
	BR_DATA_NR,
};

/*
 * Where a stream's parser stands. Everything but @buf and @data is plain
 * data, so that a copy of it, of the used part of @buf and of @data is a
 * checkpoint (br_parser_copy()).
 */
struct br_parser {
	enum br_kind	kind;
	int		state;		/* jitdump: enum br_jit_state */
	size_t		len;		/* bytes in buf: line or name */
	bool		cut;		/* the line or name was too long */
	bool		refused;	/* the kernel did not take an entry */
	uint32_t	have;		/* jitdump: bytes in rec */
	uint32_t	want;		/* jitdump: bytes rec must hold */
	uint64_t	left;		/* jitdump: record bytes not yet in rec */
	unsigned char	rec[64];	/* jitdump: header or record head */
	char		*buf;		/* BR_LINE_MAX + 1 bytes */
	/*
	 * jitdump: the bodies of the DEBUG_INFO and UNWINDING_INFO records
	 * since the last LOAD, for the next one (malloc'd and owned:
	 * br_parser_release() frees them); @data_at is the one a
	 * BR_JIT_DATA state reads into.
	 */
	unsigned char	*data[BR_DATA_NR];
	size_t		data_len[BR_DATA_NR];	/* bytes in data[] */
	size_t		data_cap[BR_DATA_NR];	/* bytes data[] has room for */
	enum br_data	data_at;
};

/*
 * A tracked file: one perf map or jitdump the runtime writes, through a
 * FILE, an fd, or both. Slots never move or go away, so a hook can find
 * one without a lock and then check it under the slot's lock.
 */
struct br_stream {
	pthread_mutex_t	lock;
	FILE		*fp;		/* atomic; NULL: no FILE */
	int		fd;		/* atomic; -1: no fd */
	bool		active;		/* atomic */
	bool		failed;		/* stopped forwarding */
	bool		warned;		/* said the self-check's message */
	bool		refused;	/* said the kernel refused an entry */
	bool		checkable;	/* the file offset can be known */
	bool		appending;	/* O_APPEND: writes go to the end */
	bool		pwritten;	/* positioned writes: no fd offset */
	bool		memory;		/* no-files mode: our memfd */
	char		name[32];	/* basename, for messages */
	uint64_t	base;		/* file offset of the first byte seen */
	uint64_t	seen;		/* bytes the parser got */
	uint64_t	ckpt_seen;	/* seen at the last good self-check */
	uint64_t	punched;	/* memory: bytes before this freed */
	struct br_parser parser;
	struct br_parser ckpt;		/* parser at ckpt_seen */
};

#define BR_MAX_STREAMS	32

extern struct br_stream br_streams[BR_MAX_STREAMS];
extern unsigned int br_nr_active;	/* active slots; atomic */
extern unsigned int br_nr_slots;	/* slots ever used; atomic */

/*
 * The slot that may hold @fp or @fd, or NULL: the hooks' fast path. A
 * hit must be confirmed under the slot's lock (br_stream_confirm()).
 */
static inline struct br_stream *br_find_file(FILE *fp)
{
	unsigned int i, n;

	if (!__atomic_load_n(&br_nr_active, __ATOMIC_ACQUIRE) || !fp ||
	    br_busy)
		return NULL;
	n = __atomic_load_n(&br_nr_slots, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++)
		if (__atomic_load_n(&br_streams[i].fp, __ATOMIC_RELAXED) == fp)
			return &br_streams[i];
	return NULL;
}

static inline struct br_stream *br_find_fd(int fd)
{
	unsigned int i, n;

	if (!__atomic_load_n(&br_nr_active, __ATOMIC_ACQUIRE) || fd < 0 ||
	    br_busy)
		return NULL;
	n = __atomic_load_n(&br_nr_slots, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++)
		if (__atomic_load_n(&br_streams[i].fd, __ATOMIC_RELAXED) == fd)
			return &br_streams[i];
	return NULL;
}

/*
 * No-files mode (PERFINJECT_BRIDGE_NO_FILES=1, set by "perfinject run
 * --no-files"): the runtime's files, and the side files its perf option
 * makes, are memory files whose used pages are given back as the bridge
 * goes. Read once, before main().
 */
extern bool br_no_files;

/* br_open_memory()'s answer when @path is not one to keep in memory. */
#define BR_NOT_MEMORY	(-2)

/* stream.c */
int br_open_memory(const char *path, int flags);
FILE *br_fopen_memory(const char *path, const char *mode, bool *done);
void br_stream_tick(struct br_stream *s, FILE *fp);
void br_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void br_stream_say(struct br_stream *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool br_stream_confirm(struct br_stream *s, FILE *fp, int fd);
void br_stream_feed(struct br_stream *s, const void *data, size_t len);
void br_stream_feedv(struct br_stream *s, const struct iovec *iov, int iovcnt,
		     size_t len);
void br_stream_pwrite(struct br_stream *s, const struct iovec *iov,
		      int iovcnt, size_t len, off_t off);
void br_stream_fail(struct br_stream *s, const char *why);
void br_after_open(const char *path, int flags, int fd);
void br_after_fopen(const char *path, const char *mode, FILE *fp);
void br_after_fdopen(int fd, const char *mode, FILE *fp);
void br_before_fclose(FILE *fp);
void br_before_close(int fd);
void br_before_close_range(unsigned int first, unsigned int last);
void br_after_freopen(const char *path, const char *mode, FILE *fp);
void br_after_fflush(struct br_stream *s, FILE *fp);
void br_after_fflush_all(void);

/* parse.c */
void br_parser_init(struct br_parser *p, enum br_kind kind, char *buf);
void br_parser_release(struct br_parser *p);
void br_parser_copy(struct br_parser *dst, const struct br_parser *src);
int br_parse(struct br_stream *s, const void *data, size_t len);

/* ranges.c */
struct perfinject_line;
/*
 * What a jitdump said about a LOAD besides its name: a line table and
 * unwind information, or none (NULL pointers).
 */
struct br_load_data {
	const struct perfinject_line *lines;
	size_t nr_lines;
	const void *eh_frame;
	size_t eh_frame_sz;
	const void *eh_frame_hdr;
	size_t eh_frame_hdr_sz;
};
int br_ranges_load(enum br_kind kind, const char *name, size_t name_len,
		   uint64_t addr, uint64_t len, const struct br_load_data *data);
int br_ranges_move(uint64_t old_addr, uint64_t new_addr);
void br_ranges_atfork_child(void);

#endif /* __PERFINJECT_BRIDGE_H */
