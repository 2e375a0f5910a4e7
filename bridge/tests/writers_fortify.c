// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Built with -O2 -D_FORTIFY_SOURCE=2, as distributions build runtimes:
 * the printf family here becomes __fprintf_chk, __vfprintf_chk,
 * __dprintf_chk and __vdprintf_chk, and an open() without a mode whose
 * flags are not known at compile time becomes __open_2 or __openat_2.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fake.h"

/* Formats through a volatile pointer: the compiler cannot fold them. */
static const char *volatile fmt_text = "%.*s";
static const char *volatile fmt_char = "%c";

static int v_fprintf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vfprintf(fp, fmt, ap);
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

int wf_put_file(FILE *fp, int m, const void *data, size_t n)
{
	const char *p = data, *end = p + n;

	while (p < end) {
		const char *nul = memchr(p, '\0', end - p);
		int run = nul ? nul - p : end - p;
		int ret;

		if (!run) {
			ret = m == W_FPRINTF_CHK ? fprintf(fp, fmt_char, 0) :
						   v_fprintf(fp, fmt_char, 0);
			run = 1;
		} else {
			ret = m == W_FPRINTF_CHK ?
				fprintf(fp, fmt_text, run, p) :
				v_fprintf(fp, fmt_text, run, p);
		}
		if (ret != run)
			return -1;
		p += run;
	}
	return 0;
}

int wf_put_fd(int fd, int m, const void *data, size_t n)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < n; i++) {
		int ret = m == W_DPRINTF_CHK ? dprintf(fd, fmt_char, p[i]) :
					       v_dprintf(fd, fmt_char, p[i]);

		if (ret != 1)
			return -1;
	}
	return 0;
}

int wf_line_file(FILE *fp, int m, const char *fmt, unsigned long a,
		 unsigned long b, const char *name)
{
	if (m == W_FPRINTF_CHK)
		return fprintf(fp, fmt, a, b, name) < 0 ? -1 : 0;
	return v_fprintf(fp, fmt, a, b, name) < 0 ? -1 : 0;
}

int wf_line_fd(int fd, int m, const char *fmt, unsigned long a,
	       unsigned long b, const char *name)
{
	if (m == W_DPRINTF_CHK)
		return dprintf(fd, fmt, a, b, name) < 0 ? -1 : 0;
	return v_dprintf(fd, fmt, a, b, name) < 0 ? -1 : 0;
}

int wf_open_2(const char *path, int flags)
{
	return open(path, flags);
}

int wf_openat_2(int dirfd, const char *path, int flags)
{
	return openat(dirfd, path, flags);
}

int wf_percent_n(FILE *fp)
{
	char fmt[] = "%n";
	int n = 0;

	return fprintf(fp, fmt, &n);
}
