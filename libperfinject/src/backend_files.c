// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The file backends: DIR/perf-PID.map (text "START SIZE name", hex, as
 * perf reads it) and DIR/jit-PID.dump (tools/perf/Documentation/
 * jitdump-specification.txt), which perf finds through the mmap of the
 * file this backend keeps.
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* The jitdump format, from tools/perf/util/jitdump.h. */
#define JITHEADER_MAGIC		0x4A695444	/* "JiTD" */
#define JITHEADER_VERSION	1

enum jit_record_type {
	JIT_CODE_LOAD		= 0,
	JIT_CODE_MOVE		= 1,
	JIT_CODE_CLOSE		= 3,
};

struct jitheader {
	uint32_t magic;
	uint32_t version;
	uint32_t total_size;
	uint32_t elf_mach;
	uint32_t pad1;
	uint32_t pid;
	uint64_t timestamp;
	uint64_t flags;
};

struct jr_prefix {
	uint32_t id;
	uint32_t total_size;
	uint64_t timestamp;
};

struct jr_code_load {
	struct jr_prefix p;
	uint32_t pid;
	uint32_t tid;
	uint64_t vma;
	uint64_t code_addr;
	uint64_t code_size;
	uint64_t code_index;
};

struct jr_code_move {
	struct jr_prefix p;
	uint32_t pid;
	uint32_t tid;
	uint64_t vma;
	uint64_t old_code_addr;
	uint64_t new_code_addr;
	uint64_t code_size;
	uint64_t code_index;
};

#if defined(__x86_64__)
#define PI_ELF_MACH	EM_X86_64
#elif defined(__i386__)
#define PI_ELF_MACH	EM_386
#elif defined(__aarch64__)
#define PI_ELF_MACH	EM_AARCH64
#elif defined(__arm__)
#define PI_ELF_MACH	EM_ARM
#elif defined(__riscv)
#define PI_ELF_MACH	EM_RISCV
#elif defined(__powerpc64__)
#define PI_ELF_MACH	EM_PPC64
#elif defined(__s390x__)
#define PI_ELF_MACH	EM_S390
#elif defined(__loongarch__)
#define PI_ELF_MACH	EM_LOONGARCH
#else
#define PI_ELF_MACH	EM_NONE
#endif

static uint64_t pi_now(void)
{
	struct timespec ts;

	/* jitdump wants CLOCK_MONOTONIC: what perf record -k mono uses. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Create @path for writing without following a symlink planted there and
 * without clobbering a file someone else owns. An existing file is
 * reused (truncated) only if it is a regular file with a single link
 * that the effective user owns.
 */
int pi_safe_create(const char *path, int *fdp)
{
	const int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
	struct stat st;
	int fd;

	fd = open(path, flags | O_CREAT | O_EXCL, 0600);
	if (fd >= 0)
		goto out;
	if (errno != EEXIST)
		return -errno;

	/* O_NONBLOCK: a FIFO planted here must not hang us. */
	fd = open(path, flags | O_NONBLOCK);
	if (fd < 0)
		return errno == ELOOP ? -EEXIST : -errno;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -errno;
	}
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
		close(fd);
		return -EEXIST;
	}
	if (st.st_uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	if (fcntl(fd, F_SETFL, 0) < 0 || ftruncate(fd, 0) < 0 ||
	    fchmod(fd, 0600) < 0) {
		close(fd);
		return -errno;
	}
out:
	*fdp = fd;
	return 0;
}

static int pi_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

static int pi_buf_reserve(struct pi_buf *b, size_t more)
{
	size_t cap;
	char *data;

	if (b->len + more <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more)
		cap *= 2;
	data = realloc(b->data, cap);
	if (!data)
		return -ENOMEM;
	b->data = data;
	b->cap = cap;
	return 0;
}

static int pi_path(struct perfinject *pi, char *path, const char *fmt)
{
	int n = snprintf(path, PATH_MAX, fmt, pi->dir, (int)pi->pid);

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

int pi_perfmap_open(struct perfinject *pi)
{
	char path[PATH_MAX];
	int err;

	err = pi_path(pi, path, "%s/perf-%d.map");
	if (!err)
		err = pi_safe_create(path, &pi->perfmap.fd);
	if (err)
		pi->perfmap.fd = -1;
	return err;
}

int pi_jitdump_open(struct perfinject *pi)
{
	struct jitheader hdr = {
		.magic		= JITHEADER_MAGIC,
		.version	= JITHEADER_VERSION,
		.total_size	= sizeof(hdr),
		.elf_mach	= PI_ELF_MACH,
		.pid		= pi->pid,
	};
	long pgsz = sysconf(_SC_PAGESIZE);
	char path[PATH_MAX];
	void *marker;
	int err, fd;

	err = pi_path(pi, path, "%s/jit-%d.dump");
	if (err)
		return err;
	err = pi_safe_create(path, &fd);
	if (err)
		return err;
	hdr.timestamp = pi_now();
	err = pi_write_all(fd, &hdr, sizeof(hdr));
	if (err)
		goto err_close;
	/*
	 * The executable mapping is the marker: perf record sees its
	 * PERF_RECORD_MMAP, and perf inject --jit finds the file by it.
	 */
	marker = mmap(NULL, pgsz, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (marker == MAP_FAILED) {
		err = -errno;
		goto err_close;
	}
	pi->jitdump.fd = fd;
	pi->jitdump.marker = marker;
	pi->jitdump.marker_len = pgsz;
	return 0;

err_close:
	close(fd);
	return err;
}

/* Close the files; @final: a jitdump gets its JIT_CODE_CLOSE record. */
void pi_files_close(struct perfinject *pi, bool final)
{
	struct jr_prefix close_rec = {
		.id		= JIT_CODE_CLOSE,
		.total_size	= sizeof(close_rec),
	};

	if (pi->jitdump.fd >= 0) {
		if (final) {
			close_rec.timestamp = pi_now();
			pi_write_all(pi->jitdump.fd, &close_rec,
				     sizeof(close_rec));
		}
		munmap(pi->jitdump.marker, pi->jitdump.marker_len);
		close(pi->jitdump.fd);
		pi->jitdump.fd = -1;
	}
	if (pi->perfmap.fd >= 0) {
		close(pi->perfmap.fd);
		pi->perfmap.fd = -1;
	}
	__atomic_and_fetch(&pi->backends, ~(PERFINJECT_BACKEND_PERFMAP |
					    PERFINJECT_BACKEND_JITDUMP),
			   __ATOMIC_RELAXED);
}

/* Copy code bytes without faulting on a bad range: -EFAULT instead. */
static int pi_code_copy(struct perfinject *pi, uint64_t addr, uint64_t len)
{
	int err;

	pi->code.len = 0;
	if (len > SIZE_MAX / 2)
		return -EFAULT;
	err = pi_buf_reserve(&pi->code, len);
	if (err)
		return err;
	err = pi_peek(getpid(), addr, pi->code.data, len);
	if (err)
		return err == -ENOMEM ? -ENOMEM : -EFAULT;
	pi->code.len = len;
	return 0;
}

int pi_code_readable(struct perfinject *pi, uint64_t addr, uint64_t len)
{
	return pi_code_copy(pi, addr, len);
}

static void pi_perfmap_line(struct perfinject *pi, uint64_t addr,
			    uint64_t len, const char *name, uint32_t name_len)
{
	size_t start, i;
	int n;

	if (pi_buf_reserve(&pi->out, name_len + 40))
		return;
	start = pi->out.len;
	n = sprintf(pi->out.data + start, "%llx %llx ",
		    (unsigned long long)addr, (unsigned long long)len);
	memcpy(pi->out.data + start + n, name, name_len);
	/* One line per entry: a newline in a name would start another. */
	for (i = start + n; i < start + n + name_len; i++)
		if (pi->out.data[i] == '\n' || pi->out.data[i] == '\r')
			pi->out.data[i] = ' ';
	pi->out.data[start + n + name_len] = '\n';
	pi->out.len += n + name_len + 1;
}

static void pi_perfmap_emit(struct perfinject *pi, const struct pi_change *chg,
			    unsigned int nr)
{
	unsigned int i;

	pi->out.len = 0;
	for (i = 0; i < nr; i++) {
		const struct perf_jit_code_entry *k = &chg[i].kentry;

		/* The format has no unload; a move is a load elsewhere. */
		if (k->op == PERF_JIT_CODE_LOAD)
			pi_perfmap_line(pi, k->addr, k->len, chg[i].name,
					chg[i].name_len);
		else if (k->op == PERF_JIT_CODE_MOVE)
			pi_perfmap_line(pi, k->new_addr, k->len, chg[i].name,
					chg[i].name_len);
	}
	if (pi->out.len && pi_write_all(pi->perfmap.fd, pi->out.data,
					pi->out.len)) {
		/* A short write leaves a torn line: stop writing the file. */
		close(pi->perfmap.fd);
		pi->perfmap.fd = -1;
		__atomic_and_fetch(&pi->backends, ~PERFINJECT_BACKEND_PERFMAP,
				   __ATOMIC_RELAXED);
	}
}

static int pi_jitdump_record(struct perfinject *pi, const struct pi_change *c,
			     uint32_t tid)
{
	const struct perf_jit_code_entry *k = &c->kentry;
	struct jr_code_load load;
	struct jr_code_move move;
	struct iovec iov[3];
	int nr_iov = 1, err;
	uint64_t size;
	ssize_t n;

	if (k->op == PERF_JIT_CODE_LOAD) {
		err = pi_code_copy(pi, k->addr, k->len);
		if (err == -EFAULT) {
			/* Unmapped since the check: keep the file sound. */
			err = pi_buf_reserve(&pi->code, k->len);
			if (!err)
				memset(pi->code.data, 0, k->len);
		}
		if (err)
			return err;
		size = sizeof(load) + c->name_len + 1 + k->len;
		if (size > UINT32_MAX)
			return -E2BIG;
		load = (struct jr_code_load){
			.p.id		= JIT_CODE_LOAD,
			.p.total_size	= size,
			.p.timestamp	= pi_now(),
			.pid		= pi->pid,
			.tid		= tid,
			.vma		= k->addr,
			.code_addr	= k->addr,
			.code_size	= k->len,
			.code_index	= c->dump_index,
		};
		iov[0] = (struct iovec){ &load, sizeof(load) };
		iov[1] = (struct iovec){ (void *)c->name, c->name_len + 1 };
		iov[2] = (struct iovec){ pi->code.data, k->len };
		nr_iov = 3;
	} else if (k->op == PERF_JIT_CODE_MOVE) {
		size = sizeof(move);
		move = (struct jr_code_move){
			.p.id		= JIT_CODE_MOVE,
			.p.total_size	= size,
			.p.timestamp	= pi_now(),
			.pid		= pi->pid,
			.tid		= tid,
			.vma		= k->new_addr,
			.old_code_addr	= k->addr,
			.new_code_addr	= k->new_addr,
			.code_size	= k->len,
			.code_index	= c->dump_index,
		};
		iov[0] = (struct iovec){ &move, sizeof(move) };
	} else {
		return 0; /* jitdump has no unload record */
	}
	n = writev(pi->jitdump.fd, iov, nr_iov);
	if (n < 0)
		return -errno;
	return (uint64_t)n == size ? 0 : -EIO;
}

static void pi_jitdump_stop(struct perfinject *pi)
{
	munmap(pi->jitdump.marker, pi->jitdump.marker_len);
	close(pi->jitdump.fd);
	pi->jitdump.fd = -1;
	__atomic_and_fetch(&pi->backends, ~PERFINJECT_BACKEND_JITDUMP,
			   __ATOMIC_RELAXED);
}

/*
 * Write changes the kernel (if active) accepted. A file that fails a
 * write is torn from then on, so that backend stops.
 */
void pi_files_emit(struct perfinject *pi, const struct pi_change *chg,
		   unsigned int nr)
{
	uint32_t tid;
	unsigned int i;

	if (pi->backends & PERFINJECT_BACKEND_PERFMAP)
		pi_perfmap_emit(pi, chg, nr);
	if (!(pi->backends & PERFINJECT_BACKEND_JITDUMP))
		return;
	tid = syscall(SYS_gettid);
	for (i = 0; i < nr; i++) {
		if (pi_jitdump_record(pi, &chg[i], tid)) {
			pi_jitdump_stop(pi);
			return;
		}
	}
}
