/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The fake runtime's writers: every libc entry point the bridge hooks,
 * spread over units compiled the way real runtimes are (plain, with
 * _FORTIFY_SOURCE, with 64-bit file offsets, optimised with stdio
 * inlined), so that each call site really imports the name it tests.
 */
#ifndef __BRIDGE_TESTS_FAKE_H
#define __BRIDGE_TESTS_FAKE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* How bytes are written. The first W_NR_FILE go to a FILE. */
enum w_method {
	/* writers_plain.c */
	W_FWRITE,		/* fwrite(p, len, 1, fp), as Erlang does */
	W_FWRITE_BYTES,		/* fwrite(p, 1, len, fp) */
	W_FWRITE_UNLOCKED,
	W_IO_FWRITE,
	W_FPUTS,		/* runs of text; NUL bytes with fputc() */
	W_FPUTS_UNLOCKED,
	W_IO_FPUTS,
	W_FPUTC,		/* byte by byte */
	W_PUTC,
	W_FPUTC_UNLOCKED,
	W_PUTC_UNLOCKED,
	W_IO_PUTC,
	W_FPRINTF,		/* "%.*s" for text, "%c" for NUL */
	W_VFPRINTF,
	W_IO_VFPRINTF,
	/* writers_fortify.c */
	W_FPRINTF_CHK,
	W_VFPRINTF_CHK,
	W_NR_FILE,

	/* writers_plain.c */
	W_WRITE = W_NR_FILE,
	W_WRITEV,		/* three iovecs */
	W_PWRITE,		/* at the fd's offset, which then moves on */
	W_PWRITEV,
	W_DPRINTF,
	W_VDPRINTF,
	/* writers_fortify.c */
	W_DPRINTF_CHK,
	W_VDPRINTF_CHK,
	/* writers_lfs.c */
	W_PWRITE64,
	W_PWRITEV64,
	W_NR,
};

static inline int w_is_printf(int m)
{
	return m == W_FPRINTF || m == W_VFPRINTF || m == W_IO_VFPRINTF ||
	       m == W_FPRINTF_CHK || m == W_VFPRINTF_CHK || m == W_DPRINTF ||
	       m == W_VDPRINTF || m == W_DPRINTF_CHK || m == W_VDPRINTF_CHK;
}

/* Write @n bytes through @m; 0 when all went, -1 otherwise. */
int wp_put_file(FILE *fp, int m, const void *p, size_t n);
int wp_put_fd(int fd, int m, const void *p, size_t n);
int wf_put_file(FILE *fp, int m, const void *p, size_t n);
int wf_put_fd(int fd, int m, const void *p, size_t n);
int wl_put_fd(int fd, int m, const void *p, size_t n);

/* One printf call with @fmt taking (unsigned long, unsigned long, char *). */
int wp_line_file(FILE *fp, int m, const char *fmt, unsigned long a,
		 unsigned long b, const char *name);
int wp_line_fd(int fd, int m, const char *fmt, unsigned long a,
	       unsigned long b, const char *name);
int wf_line_file(FILE *fp, int m, const char *fmt, unsigned long a,
		 unsigned long b, const char *name);
int wf_line_fd(int fd, int m, const char *fmt, unsigned long a,
	       unsigned long b, const char *name);

/* The open family and the lifecycle calls, by their plain names. */
int wp_open(const char *path, int flags, mode_t mode);
int wp_open64(const char *path, int flags, mode_t mode);
int wp_openat(int dirfd, const char *path, int flags, mode_t mode);
int wp_creat(const char *path, mode_t mode);
FILE *wp_fopen(const char *path, const char *mode);
FILE *wp_io_fopen(const char *path, const char *mode);
FILE *wp_freopen(const char *path, const char *mode, FILE *fp);
FILE *wp_fdopen(int fd, const char *mode);
FILE *wp_io_fdopen(int fd, const char *mode);
int wp_fflush(FILE *fp);
int wp_fflush_unlocked(FILE *fp);
int wp_io_fflush(FILE *fp);
int wp_fclose(FILE *fp);
int wp_io_fclose(FILE *fp);
int wp_fcloseall(void);
int wp_close(int fd);
int wp_dup2(int oldfd, int newfd);
int wp_dup3(int oldfd, int newfd, int flags);
int wp_close_range(unsigned int first, unsigned int last, int flags);
void wp_closefrom(int lowfd);

/* writers_fortify.c: two-argument opens become __open_2, __openat_2. */
int wf_open_2(const char *path, int flags);
int wf_openat_2(int dirfd, const char *path, int flags);
/* A %n in a writable format: a fortified printf aborts. */
int wf_percent_n(FILE *fp);

/* writers_lfs.c: the 64 names, as _FILE_OFFSET_BITS=64 makes them. */
int wl_open(const char *path, int flags, mode_t mode);
int wl_openat(int dirfd, const char *path, int flags, mode_t mode);
int wl_open_2(const char *path, int flags);
int wl_openat_2(int dirfd, const char *path, int flags);
int wl_creat(const char *path, mode_t mode);
FILE *wl_fopen(const char *path, const char *mode);
FILE *wl_freopen(const char *path, const char *mode, FILE *fp);

/*
 * writers_inline.c: what an optimising build inlines, so that no hook
 * sees it: putc_unlocked() and a small constant fwrite_unlocked().
 */
void wi_putc_unlocked(FILE *fp, const char *s);
void wi_fwrite_unlocked8(FILE *fp, const char *s);

#endif /* __BRIDGE_TESTS_FAKE_H */
