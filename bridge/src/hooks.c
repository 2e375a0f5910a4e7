// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The libc functions the bridge interposes. Each calls the real one
 * first, with the same arguments, and returns what it returned with its
 * errno; then, only for a tracked file, it hands the bytes that were
 * written to the stream's parser. The printf family formats once, with
 * the fortified formatter where the call was fortified, and writes the
 * result with the real fwrite() or write(): the file gets the same bytes.
 *
 * glibc's own paths (fprintf calling vfprintf, a FILE flushing its
 * buffer with write) are internal and never reach these, so every public
 * name a runtime may import is hooked on its own.
 */
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bridge.h"

/* An optimising build makes a macro of it; this defines the function. */
#undef fwrite_unlocked

/* glibc exports these without declaring them (or only when fortified). */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int _IO_putc(int c, FILE *fp);
int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...);
int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap);
int __dprintf_chk(int fd, int flag, const char *fmt, ...);
int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap);
int __vsnprintf_chk(char *s, size_t maxlen, int flag, size_t slen,
		    const char *fmt, va_list ap);

struct br_real br_real;
__thread unsigned int br_busy __attribute__((tls_model("initial-exec")));

static pthread_once_t br_resolve_once = PTHREAD_ONCE_INIT;

static void *br_sym(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (!p)
		br_say("libc has no %s", name);
	return p;
}

static void br_do_resolve(void)
{
	struct br_real r;

#define R(field, name) (*(void **)&r.field = br_sym(name))
	R(open, "open");
	R(open64, "open64");
	R(openat, "openat");
	R(openat64, "openat64");
	R(open_2, "__open_2");
	R(open64_2, "__open64_2");
	R(openat_2, "__openat_2");
	R(openat64_2, "__openat64_2");
	R(creat, "creat");
	R(creat64, "creat64");
	R(fopen, "fopen");
	R(fopen64, "fopen64");
	R(freopen, "freopen");
	R(freopen64, "freopen64");
	R(fdopen, "fdopen");
	R(fwrite, "fwrite");
	R(fwrite_unlocked, "fwrite_unlocked");
	R(fputs, "fputs");
	R(fputs_unlocked, "fputs_unlocked");
	R(fputc, "fputc");
	R(putc, "putc");
	R(fputc_unlocked, "fputc_unlocked");
	R(putc_unlocked, "putc_unlocked");
	R(io_putc, "_IO_putc");
	R(vfprintf, "vfprintf");
	R(vfprintf_chk, "__vfprintf_chk");
	R(vdprintf, "vdprintf");
	R(vdprintf_chk, "__vdprintf_chk");
	R(write, "write");
	R(writev, "writev");
	R(pwrite, "pwrite");
	R(pwrite64, "pwrite64");
	R(pwritev, "pwritev");
	R(pwritev64, "pwritev64");
	R(fflush, "fflush");
	R(fflush_unlocked, "fflush_unlocked");
	R(fclose, "fclose");
	R(fcloseall, "fcloseall");
	R(close, "close");
	R(dup2, "dup2");
	R(dup3, "dup3");
	R(close_range, "close_range");
	R(closefrom, "closefrom");
#undef R
	br_real = r;
}

void br_resolve(void)
{
	pthread_once(&br_resolve_once, br_do_resolve);
}

/* Before main(); a hook called earlier (another constructor) resolves. */
__attribute__((constructor)) static void br_init(void)
{
	const char *no_files = getenv("PERFINJECT_BRIDGE_NO_FILES");

	br_no_files = no_files && !strcmp(no_files, "1");
	br_resolve();
}

#define REAL(f)	(__builtin_expect(!!br_real.f, 1) ? br_real.f :		\
		 (br_resolve(), br_real.f))

/* A tracked FILE: lock it across the real call and the parse. */
static struct br_stream *br_file_begin(FILE *fp)
{
	struct br_stream *s = br_find_file(fp);

	if (s) {
		br_enter();
		flockfile(fp);
	}
	return s;
}

static void br_file_end(struct br_stream *s, FILE *fp, const void *data,
			size_t len)
{
	int saved = errno;

	if (len && br_stream_confirm(s, fp, -1)) {
		br_stream_feed(s, data, len);
		br_stream_tick(s, fp);
		pthread_mutex_unlock(&s->lock);
	}
	funlockfile(fp);
	br_leave();
	errno = saved;
}

/* A tracked fd: its stream stays locked across the real call. */
static struct br_stream *br_fd_begin(int fd)
{
	struct br_stream *s = br_find_fd(fd);

	if (!s)
		return NULL;
	br_enter();
	if (br_stream_confirm(s, NULL, fd))
		return s;
	br_leave();
	return NULL;
}

static void br_fd_end(struct br_stream *s)
{
	br_stream_tick(s, NULL);
	pthread_mutex_unlock(&s->lock);
	br_leave();
}

static bool br_open_needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* The mode argument exists only when the flags ask for one. */
#define BR_OPEN_MODE(flags, mode)					\
	do {								\
		if (br_open_needs_mode(flags)) {			\
			va_list ap;					\
									\
			va_start(ap, flags);				\
			mode = va_arg(ap, int);				\
			va_end(ap);					\
		}							\
	} while (0)

/*
 * An open of the family: in no-files mode a file of ours goes to memory
 * (br_open_memory()); otherwise @call opens it, and the bridge looks.
 */
#define BR_OPEN(path, flags, call)					\
	({								\
		int __fd = br_open_memory(path, flags);			\
									\
		if (__fd == BR_NOT_MEMORY) {				\
			__fd = (call);					\
			br_after_open(path, flags, __fd);		\
		}							\
		__fd;							\
	})

#define BR_FOPEN(path, mode, call)					\
	({								\
		bool __done;						\
		FILE *__fp = br_fopen_memory(path, mode, &__done);	\
									\
		if (!__done) {						\
			__fp = (call);					\
			br_after_fopen(path, mode, __fp);		\
		}							\
		__fp;							\
	})

BR_EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	BR_OPEN_MODE(flags, mode);
	return BR_OPEN(path, flags, REAL(open)(path, flags, mode));
}

BR_EXPORT int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	BR_OPEN_MODE(flags, mode);
	return BR_OPEN(path, flags, REAL(open64)(path, flags, mode));
}

BR_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	BR_OPEN_MODE(flags, mode);
	return BR_OPEN(path, flags, REAL(openat)(dirfd, path, flags, mode));
}

BR_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	BR_OPEN_MODE(flags, mode);
	return BR_OPEN(path, flags, REAL(openat64)(dirfd, path, flags, mode));
}

BR_EXPORT int __open_2(const char *path, int flags)
{
	return BR_OPEN(path, flags, REAL(open_2)(path, flags));
}

BR_EXPORT int __open64_2(const char *path, int flags)
{
	return BR_OPEN(path, flags, REAL(open64_2)(path, flags));
}

BR_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return BR_OPEN(path, flags, REAL(openat_2)(dirfd, path, flags));
}

BR_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	return BR_OPEN(path, flags, REAL(openat64_2)(dirfd, path, flags));
}

BR_EXPORT int creat(const char *path, mode_t mode)
{
	return BR_OPEN(path, O_CREAT | O_WRONLY | O_TRUNC,
		       REAL(creat)(path, mode));
}

BR_EXPORT int creat64(const char *path, mode_t mode)
{
	return BR_OPEN(path, O_CREAT | O_WRONLY | O_TRUNC,
		       REAL(creat64)(path, mode));
}

BR_EXPORT FILE *fopen(const char *path, const char *mode)
{
	return BR_FOPEN(path, mode, REAL(fopen)(path, mode));
}

BR_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return BR_FOPEN(path, mode, REAL(fopen64)(path, mode));
}

BR_EXPORT FILE *freopen(const char *path, const char *mode, FILE *fp)
{
	FILE *ret;

	if (br_find_file(fp))
		br_before_fclose(fp);
	ret = REAL(freopen)(path, mode, fp);
	br_after_freopen(path, mode, ret);
	return ret;
}

BR_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *fp)
{
	FILE *ret;

	if (br_find_file(fp))
		br_before_fclose(fp);
	ret = REAL(freopen64)(path, mode, fp);
	br_after_freopen(path, mode, ret);
	return ret;
}

BR_EXPORT FILE *fdopen(int fd, const char *mode)
{
	FILE *fp = REAL(fdopen)(fd, mode);

	br_after_fdopen(fd, mode, fp);
	return fp;
}

BR_EXPORT size_t fwrite(const void *ptr, size_t size, size_t n, FILE *fp)
{
	struct br_stream *s = br_file_begin(fp);
	size_t ret = REAL(fwrite)(ptr, size, n, fp);

	if (s)
		br_file_end(s, fp, ptr, ret * size);
	return ret;
}

BR_EXPORT size_t fwrite_unlocked(const void *ptr, size_t size, size_t n,
				 FILE *fp)
{
	struct br_stream *s = br_file_begin(fp);
	size_t ret = REAL(fwrite_unlocked)(ptr, size, n, fp);

	if (s)
		br_file_end(s, fp, ptr, ret * size);
	return ret;
}

BR_EXPORT int fputs(const char *str, FILE *fp)
{
	struct br_stream *s = br_file_begin(fp);
	int ret = REAL(fputs)(str, fp);

	if (s)
		br_file_end(s, fp, str, ret == EOF ? 0 : strlen(str));
	return ret;
}

BR_EXPORT int fputs_unlocked(const char *str, FILE *fp)
{
	struct br_stream *s = br_file_begin(fp);
	int ret = REAL(fputs_unlocked)(str, fp);

	if (s)
		br_file_end(s, fp, str, ret == EOF ? 0 : strlen(str));
	return ret;
}

/* The fputc family: one byte, written unless the call returned EOF. */
#define BR_PUTC(real, c, fp)						\
	({								\
		struct br_stream *s = br_file_begin(fp);		\
		int ret = REAL(real)(c, fp);				\
		unsigned char byte = c;					\
									\
		if (s)							\
			br_file_end(s, fp, &byte, ret == EOF ? 0 : 1);	\
		ret;							\
	})

BR_EXPORT int fputc(int c, FILE *fp)
{
	return BR_PUTC(fputc, c, fp);
}

BR_EXPORT int putc(int c, FILE *fp)
{
	return BR_PUTC(putc, c, fp);
}

BR_EXPORT int fputc_unlocked(int c, FILE *fp)
{
	return BR_PUTC(fputc_unlocked, c, fp);
}

BR_EXPORT int putc_unlocked(int c, FILE *fp)
{
	return BR_PUTC(putc_unlocked, c, fp);
}

BR_EXPORT int _IO_putc(int c, FILE *fp)
{
	return BR_PUTC(io_putc, c, fp);
}

/*
 * Format once, into @stack if it fits, else into a buffer from malloc()
 * (the caller frees it): the length, or -1 if formatting failed. @flag
 * is the _chk calls' flag, or -1 for the plain ones.
 */
static int br_format(char **out, char *stack, size_t stack_sz, int flag,
		     const char *fmt, va_list ap)
{
	size_t size = stack_sz;
	char *buf = stack;
	va_list aq;
	int n;

	for (;;) {
		va_copy(aq, ap);
		if (flag < 0)
			n = vsnprintf(buf, size, fmt, aq);
		else
			n = __vsnprintf_chk(buf, size, flag, size, fmt, aq);
		va_end(aq);
		if (n < 0 || (size_t)n < size || buf != stack)
			break;
		size = (size_t)n + 1;
		buf = malloc(size);
		if (!buf)
			return -1;
	}
	if (n < 0 && buf != stack)
		free(buf);
	*out = buf;
	return n;
}

/* The printf family on a tracked FILE, locked by br_file_begin(). */
static int br_vfprintf(struct br_stream *s, FILE *fp, int flag,
		       const char *fmt, va_list ap)
{
	char stack[1024], *buf;
	int n, saved;
	size_t done;

	n = br_format(&buf, stack, sizeof(stack), flag, fmt, ap);
	if (n < 0) {
		/* Let libc fail (or not) as it would; the self-check sees. */
		if (flag < 0)
			n = REAL(vfprintf)(fp, fmt, ap);
		else
			n = REAL(vfprintf_chk)(fp, flag, fmt, ap);
		br_file_end(s, fp, NULL, 0);
		return n;
	}
	done = REAL(fwrite)(buf, 1, n, fp);
	br_file_end(s, fp, buf, done);
	saved = errno;
	if (buf != stack)
		free(buf);
	errno = saved;
	return done == (size_t)n ? n : -1;
}

static int br_any_vfprintf(FILE *fp, int flag, const char *fmt, va_list ap)
{
	struct br_stream *s = br_file_begin(fp);

	if (s)
		return br_vfprintf(s, fp, flag, fmt, ap);
	if (flag < 0)
		return REAL(vfprintf)(fp, fmt, ap);
	return REAL(vfprintf_chk)(fp, flag, fmt, ap);
}

BR_EXPORT int vfprintf(FILE *fp, const char *fmt, va_list ap)
{
	return br_any_vfprintf(fp, -1, fmt, ap);
}

BR_EXPORT int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap)
{
	return br_any_vfprintf(fp, flag, fmt, ap);
}

BR_EXPORT int fprintf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = br_any_vfprintf(fp, -1, fmt, ap);
	va_end(ap);
	return n;
}

BR_EXPORT int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = br_any_vfprintf(fp, flag, fmt, ap);
	va_end(ap);
	return n;
}

/* The dprintf family on a tracked fd, locked by br_fd_begin(). */
static int br_vdprintf(struct br_stream *s, int fd, int flag,
		       const char *fmt, va_list ap)
{
	char stack[1024], *buf;
	size_t done = 0;
	int n, saved;

	n = br_format(&buf, stack, sizeof(stack), flag, fmt, ap);
	if (n < 0) {
		if (flag < 0)
			n = REAL(vdprintf)(fd, fmt, ap);
		else
			n = REAL(vdprintf_chk)(fd, flag, fmt, ap);
		br_fd_end(s);
		return n;
	}
	/* As vdprintf() writes: on until done or an error, no retry. */
	while (done < (size_t)n) {
		ssize_t w = REAL(write)(fd, buf + done, n - done);

		if (w <= 0)
			break;
		done += w;
	}
	saved = errno;
	br_stream_feed(s, buf, done);
	br_fd_end(s);
	if (buf != stack)
		free(buf);
	errno = saved;
	return done == (size_t)n ? n : -1;
}

static int br_any_vdprintf(int fd, int flag, const char *fmt, va_list ap)
{
	struct br_stream *s = br_fd_begin(fd);

	if (s)
		return br_vdprintf(s, fd, flag, fmt, ap);
	if (flag < 0)
		return REAL(vdprintf)(fd, fmt, ap);
	return REAL(vdprintf_chk)(fd, flag, fmt, ap);
}

BR_EXPORT int vdprintf(int fd, const char *fmt, va_list ap)
{
	return br_any_vdprintf(fd, -1, fmt, ap);
}

BR_EXPORT int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap)
{
	return br_any_vdprintf(fd, flag, fmt, ap);
}

BR_EXPORT int dprintf(int fd, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = br_any_vdprintf(fd, -1, fmt, ap);
	va_end(ap);
	return n;
}

BR_EXPORT int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = br_any_vdprintf(fd, flag, fmt, ap);
	va_end(ap);
	return n;
}

BR_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	struct br_stream *s = br_fd_begin(fd);
	ssize_t ret = REAL(write)(fd, buf, n);
	int saved = errno;

	if (s) {
		br_stream_feed(s, buf, ret > 0 ? ret : 0);
		br_fd_end(s);
		errno = saved;
	}
	return ret;
}

BR_EXPORT ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
	struct br_stream *s = br_fd_begin(fd);
	ssize_t ret = REAL(writev)(fd, iov, iovcnt);
	int saved = errno;

	if (s) {
		br_stream_feedv(s, iov, iovcnt, ret > 0 ? ret : 0);
		br_fd_end(s);
		errno = saved;
	}
	return ret;
}

/* The positioned writes, as one iovec or several. */
#define BR_PWRITE(call, fd, iov, iovcnt, off)				\
	({								\
		struct br_stream *s = br_fd_begin(fd);			\
		ssize_t ret = call;					\
		int saved = errno;					\
									\
		if (s) {						\
			if (ret > 0)					\
				br_stream_pwrite(s, iov, iovcnt, ret, off); \
			br_fd_end(s);					\
			errno = saved;					\
		}							\
		ret;							\
	})

BR_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	struct iovec iov = { (void *)buf, n };

	return BR_PWRITE(REAL(pwrite)(fd, buf, n, off), fd, &iov, 1, off);
}

BR_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	struct iovec iov = { (void *)buf, n };

	return BR_PWRITE(REAL(pwrite64)(fd, buf, n, off), fd, &iov, 1, off);
}

BR_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int iovcnt,
			  off_t off)
{
	return BR_PWRITE(REAL(pwritev)(fd, iov, iovcnt, off), fd, iov, iovcnt,
			 off);
}

BR_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int iovcnt,
			    off_t off)
{
	return BR_PWRITE(REAL(pwritev64)(fd, iov, iovcnt, off), fd, iov,
			 iovcnt, off);
}

/* fflush(NULL) flushes every stream; the self-check looks at ours. */
static int br_fflush(int (*real)(FILE *), FILE *fp)
{
	struct br_stream *s;
	int ret, saved;

	if (!fp) {
		ret = real(NULL);
		br_after_fflush_all();
		return ret;
	}
	s = br_file_begin(fp);
	ret = real(fp);
	if (s) {
		saved = errno;
		br_after_fflush(s, fp);
		funlockfile(fp);
		br_leave();
		errno = saved;
	}
	return ret;
}

BR_EXPORT int fflush(FILE *fp)
{
	return br_fflush(REAL(fflush), fp);
}

BR_EXPORT int fflush_unlocked(FILE *fp)
{
	return br_fflush(REAL(fflush_unlocked), fp);
}

BR_EXPORT int fclose(FILE *fp)
{
	if (br_find_file(fp))
		br_before_fclose(fp);
	return REAL(fclose)(fp);
}

/* glibc's fcloseall() flushes and unbuffers every stream, and closes none. */
BR_EXPORT int fcloseall(void)
{
	int ret = REAL(fcloseall)();

	br_after_fflush_all();
	return ret;
}

BR_EXPORT int close(int fd)
{
	if (br_find_fd(fd))
		br_before_close(fd);
	return REAL(close)(fd);
}

BR_EXPORT int dup2(int oldfd, int newfd)
{
	if (oldfd != newfd && br_find_fd(newfd))
		br_before_close(newfd);
	return REAL(dup2)(oldfd, newfd);
}

BR_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	if (oldfd != newfd && br_find_fd(newfd))
		br_before_close(newfd);
	return REAL(dup3)(oldfd, newfd, flags);
}

BR_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	if (!REAL(close_range)) {
		errno = ENOSYS;
		return -1;
	}
	if (!(flags & CLOSE_RANGE_CLOEXEC) && first <= last)
		br_before_close_range(first, last);
	return br_real.close_range(first, last, flags);
}

BR_EXPORT void closefrom(int lowfd)
{
	if (lowfd >= 0)
		br_before_close_range(lowfd, ~0U);
	if (REAL(closefrom))
		br_real.closefrom(lowfd);
}

/* The old libio names glibc still exports for old binaries. */
extern __typeof(fopen) _IO_fopen BR_EXPORT
	__attribute__((alias("fopen"), copy(fopen)));
extern __typeof(fdopen) _IO_fdopen BR_EXPORT
	__attribute__((alias("fdopen"), copy(fdopen)));
extern __typeof(fwrite) _IO_fwrite BR_EXPORT
	__attribute__((alias("fwrite"), copy(fwrite)));
extern __typeof(fputs) _IO_fputs BR_EXPORT
	__attribute__((alias("fputs"), copy(fputs)));
extern __typeof(vfprintf) _IO_vfprintf BR_EXPORT
	__attribute__((alias("vfprintf"), copy(vfprintf)));
extern __typeof(fflush) _IO_fflush BR_EXPORT
	__attribute__((alias("fflush"), copy(fflush)));
extern __typeof(fclose) _IO_fclose BR_EXPORT
	__attribute__((alias("fclose"), copy(fclose)));
