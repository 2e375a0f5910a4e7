// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The reader of another process's registry (doc/registry.md): find the
 * descriptor by its symbol, then copy the entries out with
 * process_vm_readv(), each checked by its own sequence count.
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define PI_SYMBOL		"perfinject_registry_descriptor"
/*
 * What is read of a process that may be hostile or broken: the bounds
 * perf's reader has (tools/perf/Documentation/jit-code-registry.txt).
 * 64 MiB of slots hold 1.6 million entries; the names of 200,000 Java
 * methods take about 30 MiB. A snapshot is tried for at most
 * PI_READ_MS (and at least PI_READ_MIN_TRIES times).
 */
#define PI_MAX_ENTRY_SIZE	256
#define PI_MAX_SLOT_BYTES	(64ULL << 20)
#define PI_MAX_NAME_BYTES	(256ULL << 20)
#define PI_READ_MS		2000
#define PI_READ_MIN_TRIES	3
/* Copies of the library in one process whose registries are read. */
#define PI_MAX_COPIES		16

static int pi_find_all(pid_t pid, uint64_t *addrs, size_t max);

/*
 * Read exactly @len bytes at @addr in @pid, or fail with -EFAULT (or
 * another negative errno). process_vm_readv() does not fault on a bad
 * range; kernels built without CROSS_MEMORY_ATTACH lack it, and then
 * /proc/PID/mem does the same job.
 */
int pi_peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	char path[32];
	ssize_t n;
	int fd;

	if (!len)
		return 0;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0 && errno == ENOSYS) {
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		n = pread(fd, buf, len, (off_t)addr);
		if (n < 0)
			n = errno == EIO ? 0 : -1;
		close(fd);
	}
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/*
 * Read @nr scattered ranges of @pid in as few system calls as the kernel
 * allows (IOV_MAX ranges per call): a snapshot must be copied out while
 * the writer is quiet, and one call per name would rarely fit.
 */
static int pi_peekv(pid_t pid, struct iovec *local, struct iovec *remote,
		    size_t nr)
{
	size_t done = 0, chunk, want, i;
	ssize_t n;
	int err;

	while (done < nr) {
		chunk = nr - done < IOV_MAX ? nr - done : IOV_MAX;
		want = 0;
		for (i = 0; i < chunk; i++)
			want += local[done + i].iov_len;
		n = process_vm_readv(pid, &local[done], chunk, &remote[done],
				     chunk, 0);
		if (n < 0 && errno == ENOSYS) {
			for (i = 0; i < chunk; i++) {
				err = pi_peek(pid,
					      (uintptr_t)remote[done + i].iov_base,
					      local[done + i].iov_base,
					      local[done + i].iov_len);
				if (err)
					return err;
			}
			n = want;
		}
		if (n < 0)
			return -errno;
		if ((size_t)n != want)
			return -EFAULT;
		done += chunk;
	}
	return 0;
}

struct pi_snapshot {
	uint64_t	*table;		/* chunk addresses */
	char		*a;		/* the entries, read before the names */
	char		*b;		/* and after */
	uint32_t	*off;		/* per entry: 1 + its name's offset */
	char		*names;
	struct iovec	*iov;
	size_t		table_cap, a_cap, b_cap, off_cap, names_cap, iov_cap;
};

static int pi_grow(void **p, size_t *cap, size_t need)
{
	void *n;

	if (need <= *cap)
		return 0;
	n = realloc(*p, need);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = need;
	return 0;
}

/* Read @nr_chunks chunks of @chunk_bytes at the addresses in s->table. */
static int pi_read_chunks(pid_t pid, struct pi_snapshot *s, char *dst,
			  uint64_t nr_chunks, size_t chunk_bytes)
{
	uint64_t i;
	int err;

	/* An empty registry: no table, and nothing to read. */
	if (!nr_chunks)
		return 0;
	err = pi_grow((void **)&s->iov, &s->iov_cap,
		      2 * nr_chunks * sizeof(*s->iov));
	if (err)
		return err;
	for (i = 0; i < nr_chunks; i++) {
		s->iov[i] = (struct iovec){ dst + i * chunk_bytes, chunk_bytes };
		s->iov[nr_chunks + i] = (struct iovec){
			(void *)(uintptr_t)s->table[i], chunk_bytes };
	}
	return pi_peekv(pid, s->iov, s->iov + nr_chunks, nr_chunks);
}

/*
 * Copy out the entries (pass A), the names of those that were not
 * changing, and the entries again (pass B). An entry whose count was
 * even and whose bytes are the same in both passes did not change while
 * its name was read: it is consistent. One that changed is left out: it
 * changed while the reader read, so a profiler that opened its event
 * before reading gets it from the records. No entry can keep the reader
 * from finishing, so the time this takes is bounded by the size.
 *
 * 0 with *nr_slots and *entry_size set; -EAGAIN if the chunk table was
 * changing; other: error.
 */
static int pi_read_once(pid_t pid, uint64_t desc_addr, struct pi_snapshot *s,
			uint64_t *nr_slots, uint32_t *entry_size)
{
	struct perfinject_registry_descriptor d;
	size_t names_len = 0, chunk_bytes, nr_names = 0, n;
	uint64_t seq, nr_chunks, slots, i;
	int err;

	err = pi_peek(pid, desc_addr, &d, sizeof(d));
	if (err)
		return err;
	if (d.magic != PERFINJECT_REGISTRY_MAGIC ||
	    d.version != PERFINJECT_REGISTRY_VERSION ||
	    d.descriptor_size < sizeof(d) ||
	    d.entry_size < PERFINJECT_REGISTRY_ENTRY_SIZE_V2 ||
	    d.entry_size > PI_MAX_ENTRY_SIZE || d.entry_size % 8 ||
	    !d.chunk_slots || d.chunk_slots > 65536 ||
	    (d.chunk_slots & (d.chunk_slots - 1)))
		return -EPROTO;
	if (d.seq & 1)
		return -EAGAIN;
	/* Sizes come from the target: bound them before allocating. */
	chunk_bytes = d.chunk_slots * d.entry_size;
	if (d.nr_chunks > PI_MAX_SLOT_BYTES / chunk_bytes)
		return -EFBIG;
	nr_chunks = d.nr_chunks;

	err = pi_grow((void **)&s->table, &s->table_cap,
		      (nr_chunks + 1) * sizeof(*s->table));
	if (!err)
		err = pi_peek(pid, d.chunks, s->table,
			      nr_chunks * sizeof(*s->table));
	if (pi_peek(pid, desc_addr + offsetof(typeof(d), seq), &seq,
		    sizeof(seq)))
		return -ESRCH;
	if (seq != d.seq)
		return -EAGAIN;
	if (err)
		return err;
	/* A chunk being added may not be in a table read at the same time. */
	for (i = 0; i < nr_chunks && s->table[i]; i++)
		;
	nr_chunks = i;
	slots = nr_chunks * d.chunk_slots;

	err = pi_grow((void **)&s->a, &s->a_cap, slots * d.entry_size + 1);
	if (!err)
		err = pi_grow((void **)&s->b, &s->b_cap,
			      slots * d.entry_size + 1);
	if (!err)
		err = pi_grow((void **)&s->off, &s->off_cap,
			      slots * sizeof(*s->off) + 1);
	if (!err)
		err = pi_read_chunks(pid, s, s->a, nr_chunks, chunk_bytes);
	if (err)
		return err;

	/* The names of the entries that were not changing. */
	for (i = 0; i < slots; i++) {
		const struct perfinject_registry_entry *e =
			(const void *)(s->a + i * d.entry_size);

		s->off[i] = 0;
		if ((e->seq & 1) || !e->name || e->name_len >= PERFINJECT_NAME_MAX)
			continue;
		s->off[i] = names_len + 1;
		names_len += e->name_len + 1;
		nr_names++;
		if (names_len > PI_MAX_NAME_BYTES)
			return -EFBIG;
	}
	err = pi_grow((void **)&s->names, &s->names_cap, names_len + 1);
	if (!err)
		err = pi_grow((void **)&s->iov, &s->iov_cap,
			      2 * nr_names * sizeof(*s->iov));
	if (err)
		return err;
	for (i = 0, n = 0; i < slots; i++) {
		const struct perfinject_registry_entry *e =
			(const void *)(s->a + i * d.entry_size);
		char *dst = s->names + s->off[i] - 1;

		if (!s->off[i])
			continue;
		dst[e->name_len] = '\0';
		s->iov[n] = (struct iovec){ dst, e->name_len };
		s->iov[nr_names + n] = (struct iovec){
			(void *)(uintptr_t)e->name, e->name_len };
		n++;
	}
	/* No names (an empty registry) is no table to point into. */
	err = nr_names ? pi_peekv(pid, s->iov, s->iov + nr_names, nr_names) : 0;
	if (err == -EFAULT) {
		/* A name went with its entry: find which, one by one. */
		for (i = 0, n = 0; i < slots; i++) {
			if (!s->off[i])
				continue;
			if (pi_peek(pid, (uintptr_t)s->iov[nr_names + n].iov_base,
				    s->iov[n].iov_base, s->iov[n].iov_len))
				s->off[i] = 0;
			n++;
		}
		err = 0;
	}
	if (!err)
		err = pi_read_chunks(pid, s, s->b, nr_chunks, chunk_bytes);
	if (err)
		return err;
	*nr_slots = slots;
	*entry_size = d.entry_size;
	return 0;
}

/* One registry: the number of entries given to @cb, or a negative errno. */
static int pi_read_one(pid_t pid, uint64_t desc_addr,
		       perfinject_registry_cb cb, void *ctx, bool *stop)
{
	struct pi_snapshot s = { 0 };
	struct perfinject_code code;
	uint64_t nr_slots = 0, i;
	uint32_t entry_size = 0;
	int err = -EAGAIN, tries, count = 0;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (tries = 0;; tries++) {
		err = pi_read_once(pid, desc_addr, &s, &nr_slots, &entry_size);
		if (err != -EAGAIN)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (tries + 1 >= PI_READ_MIN_TRIES &&
		    (t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000 >= PI_READ_MS)
			break;
		/* Only the chunk table, rarely: give its writer a moment. */
		usleep(tries < 10 ? 10 : 1000);
	}
	if (err)
		goto out;

	for (i = 0; i < nr_slots; i++) {
		const struct perfinject_registry_entry *e =
			(const void *)(s.a + i * entry_size);

		/* Changed while it was read: left out. */
		if (!s.off[i] || memcmp(e, s.b + i * entry_size, entry_size))
			continue;
		code.addr = e->addr;
		code.len = e->len;
		code.code_index = e->code_index;
		code.name = s.names + s.off[i] - 1;
		count++;
		if (cb(&code, ctx)) {
			*stop = true;
			break;
		}
	}
out:
	free(s.table);
	free(s.a);
	free(s.b);
	free(s.off);
	free(s.names);
	free(s.iov);
	return err ? err : count;
}

PERFINJECT_API int perfinject_registry__read_pid(pid_t pid, uint64_t desc_addr,
						 perfinject_registry_cb cb,
						 void *ctx)
{
	uint64_t addrs[PI_MAX_COPIES];
	int nr = 1, i, n, count = 0, first_err = 0, nr_ok = 0;
	bool stop = false;

	if (pid <= 0 || !cb)
		return pi_err(-EINVAL);
	if (desc_addr) {
		addrs[0] = desc_addr;
	} else {
		nr = pi_find_all(pid, addrs, PI_MAX_COPIES);
		if (nr < 0)
			return pi_err(nr);
	}
	/* Every copy of the library in the process has its own registry. */
	for (i = 0; i < nr && !stop; i++) {
		n = pi_read_one(pid, addrs[i], cb, ctx, &stop);
		if (n < 0) {
			first_err = first_err ? first_err : n;
			if (n == -ESRCH)
				break;
			continue;
		}
		count += n;
		nr_ok++;
	}
	return nr_ok ? count : pi_err(first_err);
}

/* Bytes of a section this reader copies at most: larger is skipped. */
#define PI_MAX_SECTION	(64U << 20)

/* Copy @len bytes at @off of @fd into a new buffer; NULL on failure. */
static void *pi_pread_all(int fd, uint64_t off, uint64_t len)
{
	char *buf;

	if (!len || len > PI_MAX_SECTION)
		return NULL;
	buf = malloc(len + 1);
	if (buf && pread(fd, buf, len, off) != (ssize_t)len) {
		free(buf);
		return NULL;
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

/*
 * Look @name up in the symbol tables of the ELF file @fd: the headers,
 * then each symbol table and its strings, one read each, searched in
 * memory (a read per symbol made a JVM's 217 mapped files cost 10,000
 * system calls).
 */
static int pi_elf_symbol(int fd, const char *name, uint64_t *value,
			 uint64_t *first_vaddr, bool *is_dyn)
{
	size_t len = strlen(name) + 1;
	Elf64_Shdr *sh = NULL;
	Elf64_Phdr *ph = NULL;
	int err = -ENOENT, i, pass;
	Elf64_Ehdr eh;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum ||
	    (eh.e_phnum && eh.e_phentsize != sizeof(Elf64_Phdr)))
		return -ENOEXEC;
	*is_dyn = eh.e_type == ET_DYN;

	/* The load bias is relative to the segment mapped at offset 0. */
	*first_vaddr = 0;
	ph = eh.e_phnum ? pi_pread_all(fd, eh.e_phoff,
				       eh.e_phnum * sizeof(*ph)) : NULL;
	if (eh.e_phnum && !ph)
		return -ENOEXEC;
	for (i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD) {
			*first_vaddr = ph[i].p_vaddr - ph[i].p_offset;
			break;
		}
	}
	free(ph);

	sh = pi_pread_all(fd, eh.e_shoff, eh.e_shnum * sizeof(*sh));
	if (!sh)
		return -ENOEXEC;
	/* .dynsym first (what the dynamic linker binds), then .symtab. */
	for (pass = 0; pass < 2 && err == -ENOENT; pass++) {
		uint32_t want = pass ? SHT_SYMTAB : SHT_DYNSYM;

		for (i = 0; i < eh.e_shnum && err == -ENOENT; i++) {
			Elf64_Sym *syms;
			char *strs;
			size_t nsyms, j;

			if (sh[i].sh_type != want ||
			    sh[i].sh_link >= eh.e_shnum)
				continue;
			syms = pi_pread_all(fd, sh[i].sh_offset, sh[i].sh_size);
			strs = pi_pread_all(fd, sh[sh[i].sh_link].sh_offset,
					    sh[sh[i].sh_link].sh_size);
			nsyms = syms ? sh[i].sh_size / sizeof(*syms) : 0;
			for (j = 0; strs && j < nsyms; j++) {
				const Elf64_Sym *sym = &syms[j];

				if (sym->st_shndx == SHN_UNDEF ||
				    ELF64_ST_TYPE(sym->st_info) != STT_OBJECT ||
				    sym->st_name + len >
				    sh[sh[i].sh_link].sh_size + 1 ||
				    memcmp(strs + sym->st_name, name, len))
					continue;
				*value = sym->st_value;
				err = 0;
				break;
			}
			free(syms);
			free(strs);
		}
	}
	free(sh);
	return err;
}

/*
 * Up to @max descriptor addresses of process @pid in @addrs, each once,
 * in map order: one per copy of the library mapped there. Their number,
 * or a negative errno.
 */
static int pi_find_all(pid_t pid, uint64_t *addrs, size_t max)
{
	char path[PATH_MAX + 64], line[PATH_MAX + 256], file[PATH_MAX];
	unsigned long long start, end, off;
	char last[PATH_MAX] = "";
	uint64_t value, first_vaddr, addr;
	size_t nr = 0, i;
	int fd, n;
	bool is_dyn, seen;
	FILE *maps;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "re");
	if (!maps)
		return -errno;
	/* In map order: the executable (which binds first) comes first. */
	while (nr < max && fgets(line, sizeof(line), maps)) {
		n = sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095[^\n]",
			   &start, &end, &off, file);
		if (n != 4 || file[0] != '/' || off != 0 ||
		    !strcmp(file, last))
			continue;
		snprintf(last, sizeof(last), "%s", file);
		/* Through the process's root: it may be in a container. */
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, file);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!pi_elf_symbol(fd, PI_SYMBOL, &value, &first_vaddr,
				   &is_dyn)) {
			addr = is_dyn ? start - first_vaddr + value : value;
			for (i = 0, seen = false; i < nr && !seen; i++)
				seen = addrs[i] == addr;
			if (!seen)
				addrs[nr++] = addr;
		}
		close(fd);
	}
	fclose(maps);
	return nr ? (int)nr : -ENOENT;
}

PERFINJECT_API int perfinject_registry__find_pid(pid_t pid, uint64_t *addr)
{
	int nr;

	if (pid <= 0 || !addr)
		return pi_err(-EINVAL);
	nr = pi_find_all(pid, addr, 1);
	return nr < 0 ? pi_err(nr) : 0;
}

PERFINJECT_API int perfinject_registry__find_all_pid(pid_t pid,
						     uint64_t *addrs,
						     size_t max)
{
	int nr;

	if (pid <= 0 || !addrs || !max)
		return pi_err(-EINVAL);
	if (max > PI_MAX_COPIES)
		max = PI_MAX_COPIES;
	nr = pi_find_all(pid, addrs, max);
	return nr < 0 ? pi_err(nr) : nr;
}
