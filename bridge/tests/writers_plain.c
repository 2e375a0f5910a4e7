// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The plain entry points, built without optimisation or builtins so that
 * each call below is a call of that very name.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fake.h"

/* Still exported by glibc for old binaries, no longer declared. */
int _IO_putc(int c, FILE *fp);
size_t _IO_fwrite(const void *ptr, size_t size, size_t n, FILE *fp);
int _IO_fputs(const char *s, FILE *fp);
int _IO_vfprintf(FILE *fp, const char *fmt, va_list ap);
FILE *_IO_fopen(const char *path, const char *mode);
FILE *_IO_fdopen(int fd, const char *mode);
int _IO_fflush(FILE *fp);
int _IO_fclose(FILE *fp);

static int v_fprintf(int m, FILE *fp, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = m == W_VFPRINTF ? vfprintf(fp, fmt, ap) :
			      _IO_vfprintf(fp, fmt, ap);
	va_end(ap);
	return n;
}

static int v_dprintf(int fd, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vdprintf(fd, fmt, ap);
	va_end(ap);
	return n;
}

/* A run of text without NUL, through a printf-like method. */
static int put_text_printf(FILE *fp, int m, const char *p, int n)
{
	if (m == W_FPRINTF)
		return fprintf(fp, "%.*s", n, p) == n ? 0 : -1;
	return v_fprintf(m, fp, "%.*s", n, p) == n ? 0 : -1;
}

static int put_nul_printf(FILE *fp, int m)
{
	if (m == W_FPRINTF)
		return fprintf(fp, "%c", 0) == 1 ? 0 : -1;
	return v_fprintf(m, fp, "%c", 0) == 1 ? 0 : -1;
}

static int put_text_fputs(FILE *fp, int m, const char *p, size_t n)
{
	char *s = strndup(p, n);
	int ret;

	if (!s)
		return -1;
	if (m == W_FPUTS)
		ret = fputs(s, fp);
	else if (m == W_FPUTS_UNLOCKED)
		ret = fputs_unlocked(s, fp);
	else
		ret = _IO_fputs(s, fp);
	free(s);
	return ret == EOF ? -1 : 0;
}

int wp_put_file(FILE *fp, int m, const void *data, size_t n)
{
	const char *p = data, *end = p + n;
	int ret = 0;

	switch (m) {
	case W_FWRITE:
		return !n || fwrite(p, n, 1, fp) == 1 ? 0 : -1;
	case W_FWRITE_BYTES:
		return fwrite(p, 1, n, fp) == n ? 0 : -1;
	case W_FWRITE_UNLOCKED:
		return fwrite_unlocked(p, 1, n, fp) == n ? 0 : -1;
	case W_IO_FWRITE:
		return _IO_fwrite(p, 1, n, fp) == n ? 0 : -1;
	}
	while (p < end && !ret) {
		const char *nul = memchr(p, '\0', end - p);
		size_t run = nul ? (size_t)(nul - p) : (size_t)(end - p);
		unsigned char c = *p;

		switch (m) {
		case W_FPUTS:
		case W_FPUTS_UNLOCKED:
		case W_IO_FPUTS:
			if (run) {
				ret = put_text_fputs(fp, m, p, run);
				p += run;
			} else {
				ret = fputc(0, fp) == EOF ? -1 : 0;
				p++;
			}
			break;
		case W_FPRINTF:
		case W_VFPRINTF:
		case W_IO_VFPRINTF:
			if (run) {
				ret = put_text_printf(fp, m, p, run);
				p += run;
			} else {
				ret = put_nul_printf(fp, m);
				p++;
			}
			break;
		case W_FPUTC:
			ret = fputc(c, fp) == c ? 0 : -1;
			p++;
			break;
		case W_PUTC:
			ret = putc(c, fp) == c ? 0 : -1;
			p++;
			break;
		case W_FPUTC_UNLOCKED:
			ret = fputc_unlocked(c, fp) == c ? 0 : -1;
			p++;
			break;
		case W_PUTC_UNLOCKED:
			ret = putc_unlocked(c, fp) == c ? 0 : -1;
			p++;
			break;
		case W_IO_PUTC:
			ret = _IO_putc(c, fp) == c ? 0 : -1;
			p++;
			break;
		default:
			return -1;
		}
	}
	return ret;
}

int wp_line_file(FILE *fp, int m, const char *fmt, unsigned long a,
		 unsigned long b, const char *name)
{
	if (m == W_FPRINTF)
		return fprintf(fp, fmt, a, b, name) < 0 ? -1 : 0;
	return v_fprintf(m, fp, fmt, a, b, name) < 0 ? -1 : 0;
}

int wp_line_fd(int fd, int m, const char *fmt, unsigned long a,
	       unsigned long b, const char *name)
{
	if (m == W_DPRINTF)
		return dprintf(fd, fmt, a, b, name) < 0 ? -1 : 0;
	return v_dprintf(fd, fmt, a, b, name) < 0 ? -1 : 0;
}

/* Three iovecs; a positioned write at the offset, which then moves on. */
int wp_put_fd(int fd, int m, const void *data, size_t n)
{
	struct iovec iov[3] = {
		{ (void *)data, n / 3 },
		{ (char *)data + n / 3, n / 3 },
		{ (char *)data + 2 * (n / 3), n - 2 * (n / 3) },
	};
	const char *p = data;
	off_t off;
	size_t i;

	switch (m) {
	case W_WRITE:
		return write(fd, data, n) == (ssize_t)n ? 0 : -1;
	case W_WRITEV:
		return writev(fd, iov, 3) == (ssize_t)n ? 0 : -1;
	case W_PWRITE:
	case W_PWRITEV:
		off = lseek(fd, 0, SEEK_CUR);
		if (off < 0)
			return -1;
		if ((m == W_PWRITE ? pwrite(fd, data, n, off) :
				     pwritev(fd, iov, 3, off)) != (ssize_t)n)
			return -1;
		return lseek(fd, off + n, SEEK_SET) < 0 ? -1 : 0;
	case W_DPRINTF:
	case W_VDPRINTF:
		for (i = 0; i < n; i++) {
			int ret = m == W_DPRINTF ? dprintf(fd, "%c", p[i]) :
						   v_dprintf(fd, "%c", p[i]);

			if (ret != 1)
				return -1;
		}
		return 0;
	}
	return -1;
}

int wp_open(const char *path, int flags, mode_t mode)
{
	return open(path, flags, mode);
}

int wp_open64(const char *path, int flags, mode_t mode)
{
	return open64(path, flags, mode);
}

int wp_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	return openat(dirfd, path, flags, mode);
}

int wp_creat(const char *path, mode_t mode)
{
	return creat(path, mode);
}

FILE *wp_fopen(const char *path, const char *mode)
{
	return fopen(path, mode);
}

FILE *wp_io_fopen(const char *path, const char *mode)
{
	return _IO_fopen(path, mode);
}

FILE *wp_freopen(const char *path, const char *mode, FILE *fp)
{
	return freopen(path, mode, fp);
}

FILE *wp_fdopen(int fd, const char *mode)
{
	return fdopen(fd, mode);
}

FILE *wp_io_fdopen(int fd, const char *mode)
{
	return _IO_fdopen(fd, mode);
}

int wp_fflush(FILE *fp)
{
	return fflush(fp);
}

int wp_fflush_unlocked(FILE *fp)
{
	return fflush_unlocked(fp);
}

int wp_io_fflush(FILE *fp)
{
	return _IO_fflush(fp);
}

int wp_fclose(FILE *fp)
{
	return fclose(fp);
}

int wp_io_fclose(FILE *fp)
{
	return _IO_fclose(fp);
}

int wp_fcloseall(void)
{
	return fcloseall();
}

int wp_close(int fd)
{
	return close(fd);
}

int wp_dup2(int oldfd, int newfd)
{
	return dup2(oldfd, newfd);
}

int wp_dup3(int oldfd, int newfd, int flags)
{
	return dup3(oldfd, newfd, flags);
}

int wp_close_range(unsigned int first, unsigned int last, int flags)
{
	return close_range(first, last, flags);
}

void wp_closefrom(int lowfd)
{
	closefrom(lowfd);
}
