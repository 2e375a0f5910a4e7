// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Built with -O2 -D_FORTIFY_SOURCE=2 -D_FILE_OFFSET_BITS=64: the plain
 * names below are the 64 ones in the object (open64, openat64,
 * __open64_2, __openat64_2, creat64, fopen64, freopen64, pwrite64,
 * pwritev64), as in a runtime built for large files.
 */
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fake.h"

int wl_put_fd(int fd, int m, const void *data, size_t n)
{
	struct iovec iov[2] = {
		{ (void *)data, n / 2 },
		{ (char *)data + n / 2, n - n / 2 },
	};
	off_t off = lseek(fd, 0, SEEK_CUR);
	ssize_t done;

	if (off < 0)
		return -1;
	if (m == W_PWRITE64)
		done = pwrite(fd, data, n, off);
	else
		done = pwritev(fd, iov, 2, off);
	if (done != (ssize_t)n)
		return -1;
	return lseek(fd, off + n, SEEK_SET) < 0 ? -1 : 0;
}

int wl_open(const char *path, int flags, mode_t mode)
{
	return open(path, flags | O_CREAT, mode);
}

int wl_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	return openat(dirfd, path, flags | O_CREAT, mode);
}

int wl_open_2(const char *path, int flags)
{
	return open(path, flags);
}

int wl_openat_2(int dirfd, const char *path, int flags)
{
	return openat(dirfd, path, flags);
}

int wl_creat(const char *path, mode_t mode)
{
	return creat(path, mode);
}

FILE *wl_fopen(const char *path, const char *mode)
{
	return fopen(path, mode);
}

FILE *wl_freopen(const char *path, const char *mode, FILE *fp)
{
	return freopen(path, mode, fp);
}
