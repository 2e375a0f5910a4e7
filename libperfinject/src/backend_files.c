// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The file backends: DIR/perf-PID.map (text "START SIZE name", hex, as
 * perf reads it) and DIR/jit-PID.dump (tools/perf/Documentation/
 * jitdump-specification.txt), which perf finds through the mmap of the
 * file this backend keeps.
 *
 * A process has one of each, whoever writes it: every handle, and every
 * copy of the library in the process (a runtime embedding another, a
 * JVMTI agent with its static copy next to libperfinject.so) opens the
 * same path with O_APPEND and writes whole records in one call each.
 * Open file description locks (F_OFD_SETLK) on the file coordinate the
 * writers, also across copies that share no memory:
 *
 *   byte 0: every writer holds a read lock on it while it has the file
 *	     open; a write lock on it means "nobody else writes".
 *   byte 1: a write lock on it serialises opening and closing.
 *
 * A writer that opens the file and finds nobody else writing it decides
 * whether it is this process's file (written since the process started:
 * a handle freed earlier) or a stale one (a former process with the same
 * pid), and only a stale one is emptied. The last writer to close a
 * jitdump adds JIT_CODE_CLOSE.
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
	JIT_CODE_DEBUG_INFO	= 2,
	JIT_CODE_CLOSE		= 3,
	JIT_CODE_UNWINDING_INFO	= 4,
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

struct jr_code_debug_info {
	struct jr_prefix p;
	uint64_t code_addr;
	uint64_t nr_entry;
	/* entries: u64 addr, i32 lineno, i32 discrim, NUL-terminated file */
};

struct jr_debug_entry {
	uint64_t addr;
	int32_t lineno;
	int32_t discrim;
};

struct jr_code_unwinding_info {
	struct jr_prefix p;
	uint64_t unwinding_size;
	uint64_t eh_frame_hdr_size;
	uint64_t mapped_size;
	/* .eh_frame, then .eh_frame_hdr, then padding to 8 bytes */
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
 * Open @path for appending without following a symlink planted there and
 * without writing into a file someone else owns: an existing file is
 * used only if it is a regular file with a single link that the
 * effective user owns. *@created tells whether this call created it.
 */
int pi_safe_create(const char *path, int *fdp, bool *created)
{
	const int flags = O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC |
			  O_NOCTTY;
	struct stat st;
	int fd;

	*created = true;
	fd = open(path, flags | O_CREAT | O_EXCL, 0600);
	if (fd >= 0)
		goto out;
	if (errno != EEXIST)
		return -errno;

	*created = false;
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
	if (fcntl(fd, F_SETFL, O_APPEND) < 0 || fchmod(fd, 0600) < 0) {
		close(fd);
		return -errno;
	}
out:
	*fdp = fd;
	return 0;
}

static int pi_ofd_lock(int fd, short type, off_t byte, bool wait)
{
	struct flock fl = {
		.l_type		= type,
		.l_whence	= SEEK_SET,
		.l_start	= byte,
		.l_len		= 1,
	};

	while (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

/* When this process started, in CLOCK_REALTIME seconds; 0: unknown. */
static time_t pi_process_start(void)
{
	unsigned long long start_ticks;
	long hz = sysconf(_SC_CLK_TCK);
	struct timespec boot;
	char buf[1024], *p;
	ssize_t n;
	int fd, i;

	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || hz <= 0)
		return 0;
	buf[n] = '\0';
	/* Field 22, counted after the command, which may hold anything. */
	p = strrchr(buf, ')');
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &start_ticks) != 1)
		return 0;
	/* Ticks since boot: how long ago that was, on the wall clock. */
	if (clock_gettime(CLOCK_BOOTTIME, &boot) < 0)
		return 0;
	return time(NULL) - (boot.tv_sec - (time_t)(start_ticks / hz));
}

/*
 * Nobody else writes the file: is it ours (written since this process
 * started) or left by a former process with the same pid? The start
 * time has whole seconds and the clock may step: "ours" allows two.
 */
static bool pi_file_stale(int fd, size_t min_size)
{
	time_t start = pi_process_start();
	struct stat st;

	if (fstat(fd, &st) < 0)
		return true;
	if ((size_t)st.st_size < min_size)
		return true;
	return !start || st.st_mtime + 2 < start;
}

/*
 * Join the writers of the file open at @fd: see the comment at the top.
 * *@fresh tells whether the file is empty now and needs its header.
 */
static int pi_file_join(int fd, size_t min_size, bool *fresh)
{
	int err;

	err = pi_ofd_lock(fd, F_WRLCK, 1, true);
	if (err)
		return err;
	*fresh = false;
	if (!pi_ofd_lock(fd, F_WRLCK, 0, false)) {
		/* Nobody else writes it. */
		if (pi_file_stale(fd, min_size)) {
			if (ftruncate(fd, 0) < 0) {
				err = -errno;
				goto out;
			}
			*fresh = true;
		}
	}
	/* Converting a lock we hold is atomic: nobody slips in between. */
	err = pi_ofd_lock(fd, F_RDLCK, 0, false);
out:
	pi_ofd_lock(fd, F_UNLCK, 1, false);
	return err;
}

/* Are we the last writer? Then we keep the file to ourselves. */
static bool pi_file_last(int fd)
{
	bool last;

	if (pi_ofd_lock(fd, F_WRLCK, 1, true))
		return false;
	last = !pi_ofd_lock(fd, F_WRLCK, 0, false);
	if (!last)
		pi_ofd_lock(fd, F_UNLCK, 1, false);
	/* The last writer keeps byte 1 until it closes the file. */
	return last;
}

static int pi_write_all(int fd, const void *buf, size_t len, size_t *done)
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
		*done += n;
	}
	return 0;
}

/*
 * The last write to @fd got only @torn bytes of its record into the file
 * before the file system refused the rest (the disk is full, a quota, a
 * file size limit): cut them off, so that the file ends with a whole line
 * or record, as perf must read it. Nothing can have been appended after
 * them: the writes of every other writer fail the same way.
 */
static void pi_cut_torn(int fd, size_t torn)
{
	struct stat st;

	if (torn && !fstat(fd, &st) && (uint64_t)st.st_size >= torn &&
	    ftruncate(fd, st.st_size - torn))
		pi_warn("cannot cut a torn record off the file: %s\n",
			strerror(errno));
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
	bool created, fresh;
	int err, fd;

	err = pi_path(pi, path, "%s/perf-%d.map");
	if (err)
		return err;
	err = pi_safe_create(path, &fd, &created);
	if (err)
		return err;
	err = pi_file_join(fd, 0, &fresh);
	if (err) {
		close(fd);
		return err;
	}
	pi->perfmap.fd = fd;
	return 0;
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
	bool created, fresh;
	void *marker;
	int err, fd;

	err = pi_path(pi, path, "%s/jit-%d.dump");
	if (err)
		return err;
	err = pi_safe_create(path, &fd, &created);
	if (err)
		return err;
	err = pi_file_join(fd, sizeof(hdr), &fresh);
	if (err)
		goto err_close;
	if (fresh) {
		size_t done = 0;

		hdr.timestamp = pi_now();
		err = pi_write_all(fd, &hdr, sizeof(hdr), &done);
		if (err) {
			/* No torn header for perf to refuse the file over. */
			if (ftruncate(fd, 0))
				pi_warn("jitdump: cannot empty the file after its header failed: %s\n",
					strerror(errno));
			goto err_close;
		}
	}
	/*
	 * The executable mapping is the marker: perf record sees its
	 * PERF_RECORD_MMAP, and perf inject --jit finds the file by it
	 * (once per process, however many writers map it).
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

/*
 * Close the files. @final: this process is done with them, and the last
 * writer of the jitdump adds its JIT_CODE_CLOSE record (a forked child
 * closing its parent's files is not final).
 */
void pi_files_close(struct perfinject *pi, bool final)
{
	pi_files_close_some(pi, PI_FILE_BACKENDS, final);
}

/* pi_files_close() of the file backends in @which only. */
void pi_files_close_some(struct perfinject *pi, unsigned int which,
			 bool final)
{
	struct jr_prefix close_rec = {
		.id		= JIT_CODE_CLOSE,
		.total_size	= sizeof(close_rec),
	};

	if ((which & PERFINJECT_BACKEND_JITDUMP) && pi->jitdump.fd >= 0) {
		if (final && pi_file_last(pi->jitdump.fd)) {
			size_t done = 0;
			int err;

			close_rec.timestamp = pi_now();
			err = pi_write_all(pi->jitdump.fd, &close_rec,
					   sizeof(close_rec), &done);
			if (err) {
				pi_cut_torn(pi->jitdump.fd, done);
				pi_warn("jitdump: no close record: %s\n",
					strerror(-err));
			}
		}
		munmap(pi->jitdump.marker, pi->jitdump.marker_len);
		close(pi->jitdump.fd);
		pi->jitdump.fd = -1;
	}
	if ((which & PERFINJECT_BACKEND_PERFMAP) && pi->perfmap.fd >= 0) {
		close(pi->perfmap.fd);
		pi->perfmap.fd = -1;
	}
	__atomic_and_fetch(&pi->backends, ~(which & PI_FILE_BACKENDS),
			   __ATOMIC_RELAXED);
}

static void pi_perfmap_line(struct perfinject *pi, uint64_t addr,
			    uint64_t len, const char *name, uint32_t name_len)
{
	size_t start, i;
	int n;

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

static void pi_perfmap_stop(struct perfinject *pi, const char *why, int err)
{
	pi_warn("perf-map backend off: %s: %s\n", why, strerror(-err));
	close(pi->perfmap.fd);
	pi->perfmap.fd = -1;
	__atomic_and_fetch(&pi->backends, ~PERFINJECT_BACKEND_PERFMAP,
			   __ATOMIC_RELAXED);
}

static void pi_perfmap_emit(struct perfinject *pi, const struct pi_change *chg,
			    unsigned int nr)
{
	size_t need = 0;
	unsigned int i;
	ssize_t n;
	int err;

	for (i = 0; i < nr; i++)
		need += chg[i].name_len + 40;
	pi->out.len = 0;
	err = pi_buf_reserve(&pi->out, need);
	if (err) {
		pi_warn("perf-map: %u lines not written: %s\n", nr,
			strerror(-err));
		return;
	}
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
	if (!pi->out.len)
		return;
	/* One write: the lines land whole between other writers' lines. */
	do {
		n = write(pi->perfmap.fd, pi->out.data, pi->out.len);
	} while (n < 0 && errno == EINTR);
	if (n >= 0 && (size_t)n == pi->out.len)
		return;
	/*
	 * The file would miss lines from here on, and perf cannot tell: say
	 * so once and stop writing it, after cutting off a torn line.
	 */
	err = n < 0 ? -errno : -ENOSPC;
	if (n > 0)
		pi_cut_torn(pi->perfmap.fd, n);
	pi_perfmap_stop(pi, "a write failed", err);
}

/* Bytes of the DEBUG_INFO record for @o's line table; 0: none. */
static uint64_t pi_debug_info_size(const struct perfinject_load_opts *o)
{
	const char *row = (const char *)o->lines;
	uint64_t size = sizeof(struct jr_code_debug_info);
	size_t i;

	if (!o->nr_lines)
		return 0;
	for (i = 0; i < o->nr_lines; i++, row += o->line_sz) {
		const struct perfinject_line *l = (const void *)row;

		size += sizeof(struct jr_debug_entry) +
			strlen(l->frames->file) + 1;
	}
	return (size + 7) & ~7ULL;
}

static uint64_t pi_unwinding_info_size(const struct perfinject_load_opts *o)
{
	if (!o->eh_frame)
		return 0;
	return (sizeof(struct jr_code_unwinding_info) + o->eh_frame_sz +
		o->eh_frame_hdr_sz + 7) & ~7ULL;
}

/* Every jitdump record of a load fits its 32-bit size field. */
bool pi_jitdump_fits(uint64_t name_len, uint64_t len,
		     const struct perfinject_load_opts *o)
{
	return len <= UINT32_MAX &&
	       sizeof(struct jr_code_load) + name_len + 1 + len <= UINT32_MAX &&
	       o->eh_frame_sz <= UINT32_MAX &&
	       o->eh_frame_hdr_sz <= UINT32_MAX &&
	       pi_unwinding_info_size(o) <= UINT32_MAX &&
	       pi_debug_info_size(o) <= UINT32_MAX;
}

/*
 * The DEBUG_INFO and UNWINDING_INFO records that go before a LOAD, into
 * pi->info: perf inject attaches them to the next LOAD in the file, so
 * they are written in the same write as the LOAD. jitdump has one
 * position per row: the innermost frame's.
 */
static int pi_jitdump_info(struct perfinject *pi, const struct pi_change *c)
{
	const struct perfinject_load_opts *o = c->lo ? c->lo : &pi_no_opts;
	uint64_t dsize = pi_debug_info_size(o);
	uint64_t usize = pi_unwinding_info_size(o);
	const char *row = (const char *)o->lines;
	char *p;
	size_t i;
	int err;

	pi->info.len = 0;
	if (!dsize && !usize)
		return 0;
	err = pi_buf_reserve(&pi->info, dsize + usize);
	if (err)
		return err;
	p = pi->info.data;
	memset(p, 0, dsize + usize);
	if (dsize) {
		struct jr_code_debug_info d = {
			.p.id		= JIT_CODE_DEBUG_INFO,
			.p.total_size	= dsize,
			.p.timestamp	= pi_now(),
			.code_addr	= c->kentry.addr,
			.nr_entry	= o->nr_lines,
		};

		memcpy(p, &d, sizeof(d));
		p += sizeof(d);
		for (i = 0; i < o->nr_lines; i++, row += o->line_sz) {
			const struct perfinject_line *l = (const void *)row;
			struct jr_debug_entry e = {
				.addr		= l->addr,
				.lineno		= l->frames->line,
				.discrim	= l->discrim,
			};
			size_t n = strlen(l->frames->file) + 1;

			memcpy(p, &e, sizeof(e));
			memcpy(p + sizeof(e), l->frames->file, n);
			p += sizeof(e) + n;
		}
		p = pi->info.data + dsize;
	}
	if (usize) {
		struct jr_code_unwinding_info u = {
			.p.id		= JIT_CODE_UNWINDING_INFO,
			.p.total_size	= usize,
			.p.timestamp	= pi_now(),
			.unwinding_size	= o->eh_frame_sz + o->eh_frame_hdr_sz,
			.eh_frame_hdr_size = o->eh_frame_hdr_sz,
			.mapped_size	= o->eh_frame_sz + o->eh_frame_hdr_sz,
		};

		memcpy(p, &u, sizeof(u));
		memcpy(p + sizeof(u), o->eh_frame, o->eh_frame_sz);
		memcpy(p + sizeof(u) + o->eh_frame_sz, o->eh_frame_hdr,
		       o->eh_frame_hdr_sz);
	}
	pi->info.len = dsize + usize;
	return 0;
}

static void pi_jitdump_stop(struct perfinject *pi, const char *why, int err)
{
	pi_warn("jitdump backend off: %s: %s\n", why, strerror(-err));
	munmap(pi->jitdump.marker, pi->jitdump.marker_len);
	close(pi->jitdump.fd);
	pi->jitdump.fd = -1;
	__atomic_and_fetch(&pi->backends, ~PERFINJECT_BACKEND_JITDUMP,
			   __ATOMIC_RELAXED);
}

/*
 * Finish a record of which only @done of @size bytes reached the file:
 * the rest of the header and name from @iov, zeros for the code. Returns
 * 0 when the record is whole again.
 */
static int pi_jitdump_complete(struct perfinject *pi, const struct iovec *iov,
			       int nr_iov, size_t *done, size_t size)
{
	static const char zeros[4096];
	size_t off = 0, len;
	int i, err;

	for (i = 0; i < nr_iov - 1; i++) {
		if (*done < off + iov[i].iov_len) {
			len = off + iov[i].iov_len - *done;
			err = pi_write_all(pi->jitdump.fd,
					   (char *)iov[i].iov_base + *done - off,
					   len, done);
			if (err)
				return err;
		}
		off += iov[i].iov_len;
	}
	while (*done < size) {
		len = size - *done < sizeof(zeros) ? size - *done :
		      sizeof(zeros);
		err = pi_write_all(pi->jitdump.fd, zeros, len, done);
		if (err)
			return err;
	}
	return 0;
}

/*
 * One record in one writev(). The code bytes go from where the code is
 * straight to the file: no copy, and no read of our own memory through
 * process_vm_readv(), which a seccomp filter may deny. If the range is
 * not readable the kernel returns EFAULT, and the record is finished
 * with zeros for the code, so the file stays sound.
 */
static int pi_jitdump_record(struct perfinject *pi, const struct pi_change *c,
			     uint32_t tid)
{
	const struct perf_jit_code_entry *k = &c->kentry;
	struct jr_code_load load;
	struct jr_code_move move;
	struct iovec iov[4];
	int nr_iov = 1, err;
	uint64_t size;
	size_t done;
	ssize_t n;

	if (k->op == PERF_JIT_CODE_LOAD) {
		err = pi_jitdump_info(pi, c);
		if (err) {
			pi_warn("jitdump: line table and unwind info of %#llx not written: %s\n",
				(unsigned long long)k->addr, strerror(-err));
			pi->info.len = 0;
		}
		size = sizeof(load) + c->name_len + 1 + k->len;
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
		nr_iov = 0;
		if (pi->info.len)
			iov[nr_iov++] = (struct iovec){ pi->info.data,
							pi->info.len };
		iov[nr_iov++] = (struct iovec){ &load, sizeof(load) };
		iov[nr_iov++] = (struct iovec){ (void *)c->name,
						c->name_len + 1 };
		iov[nr_iov++] = (struct iovec){ (void *)(uintptr_t)k->addr,
						k->len };
		size += pi->info.len;
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
	do {
		n = writev(pi->jitdump.fd, iov, nr_iov);
	} while (n < 0 && errno == EINTR);
	if ((uint64_t)n == size)
		return 0;
	/* Nothing written: the file is sound, but would miss this record. */
	if (n < 0 && errno != EFAULT)
		return -errno;
	/*
	 * Short, or EFAULT: the code is not readable (the rest goes in as
	 * zeros), or the file system refused the rest (then so it does the
	 * zeros, and the torn record is cut off).
	 */
	done = n < 0 ? 0 : n;
	err = pi_jitdump_complete(pi, iov, nr_iov, &done, size);
	if (err) {
		pi_cut_torn(pi->jitdump.fd, done);
		return err;
	}
	if (k->op == PERF_JIT_CODE_LOAD)
		pi_warn("jitdump: code at %#llx (%llu bytes) not readable: written as zeros\n",
			(unsigned long long)k->addr,
			(unsigned long long)k->len);
	return 0;
}


/*
 * Write changes the kernel (if active) accepted. A record that could not
 * be written whole leaves the file torn, so that backend stops, and says
 * so.
 */
void pi_files_emit(struct perfinject *pi, const struct pi_change *chg,
		   unsigned int nr)
{
	pi_files_emit_to(pi, chg, nr, pi->backends);
}

/* pi_files_emit() into those of the active file backends in @which. */
void pi_files_emit_to(struct perfinject *pi, const struct pi_change *chg,
		      unsigned int nr, unsigned int which)
{
	unsigned int i;
	int err;

	which &= pi->backends;
	if (which & PERFINJECT_BACKEND_PERFMAP)
		pi_perfmap_emit(pi, chg, nr);
	if (!(which & PERFINJECT_BACKEND_JITDUMP))
		return;
	for (i = 0; i < nr; i++) {
		err = pi_jitdump_record(pi, &chg[i], pi_gettid());
		if (err) {
			/* The file would miss records: say so once, stop. */
			pi_jitdump_stop(pi, "a write failed", err);
			return;
		}
	}
}
