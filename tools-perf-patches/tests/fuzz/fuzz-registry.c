// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer over perf's reader of a JIT code registry, the memory of a
 * process perf does not trust (util/jit-registry.c). The input is a
 * registry as the process has it, and the changes the process makes to it
 * while perf reads (registry-input.h). It is mapped in this process, and
 * perf reads it with jit_registry__snapshot_data(), the snapshot the
 * replay takes for an event that takes the entries' line tables and
 * unwind information too (perf test "JIT code registry reader" calls it
 * on a child process), through process_vm_readv() of this process.
 *
 * Three calls perf's code makes are this program's (run.sh renames them
 * in its copy of perf's objects):
 *  - process_vm_readv(): makes the changes due before a read, then reads;
 *  - usleep(): returns at once, and moves a clock of its own on by the
 *    time asked, so that the 2 s perf gives a registry whose chunk table
 *    stays odd pass in a few thousand reads, not 2 s an input;
 *  - clock_gettime(): CLOCK_MONOTONIC is that clock.
 *
 * Besides the sanitizers and libFuzzer's limits (-rss_limit_mb,
 * -malloc_limit_mb, -timeout), each input checks the result: a count of
 * entries no larger than 64 MiB of entries can hold, or one of the errors
 * the reader documents; and that perf gave up within its 2 s. With
 * FUZZ_VERBOSE set in the environment it prints what perf made of each
 * input.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <linux/compiler.h>

#include "util/debug.h"
#include "util/jit-registry.h"
#include "registry-input.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

ssize_t fuzz_process_vm_readv(pid_t pid, const struct iovec *local,
			      unsigned long liovcnt, const struct iovec *remote,
			      unsigned long riovcnt, unsigned long flags);
int fuzz_usleep(useconds_t usec);
int fuzz_clock_gettime(clockid_t clk, struct timespec *ts);

#define NR_PAGES	(REGISTRY_WINDOW / REGISTRY_PAGE)

static char *window = (char *)(uintptr_t)REGISTRY_BASE;
static unsigned char unmapped[NR_PAGES / 8];
static const struct registry_change *changes;
static unsigned int nr_changes;
static unsigned long reads;
static unsigned long long slept_ns;
static bool report;

static bool page_unmapped(uint64_t offset)
{
	uint64_t page = offset / REGISTRY_PAGE;

	return unmapped[page / 8] & (1 << (page % 8));
}

static void unmap_page(uint64_t offset)
{
	uint64_t page = offset / REGISTRY_PAGE;

	if (mprotect(window + page * REGISTRY_PAGE, REGISTRY_PAGE, PROT_NONE))
		abort();
	unmapped[page / 8] |= 1 << (page % 8);
}

/* What the process does to its registry before perf's read number @read. */
static void make_changes(unsigned long read)
{
	for (unsigned int i = 0; i < nr_changes; i++) {
		const struct registry_change *c = &changes[i];
		uint64_t offset = c->offset & ~REGISTRY_UNMAP;

		if (c->before != read || offset + sizeof(c->value) > REGISTRY_WINDOW)
			continue;
		if (c->offset & REGISTRY_UNMAP) {
			unmap_page(offset);
			continue;
		}
		if (page_unmapped(offset) || page_unmapped(offset + sizeof(c->value) - 1))
			continue;
		/* The runtime's store, as another thread's would land */
		__atomic_store_n((uint64_t *)(window + (offset & ~7ULL)), c->value,
				 __ATOMIC_RELEASE);
	}
}

ssize_t fuzz_process_vm_readv(pid_t pid, const struct iovec *local,
			      unsigned long liovcnt, const struct iovec *remote,
			      unsigned long riovcnt, unsigned long flags)
{
	if (pid != getpid()) {
		fprintf(stderr, "fuzz-registry: perf read process %d\n", pid);
		abort();
	}
	make_changes(reads++);
	return process_vm_readv(pid, local, liovcnt, remote, riovcnt, flags);
}

int fuzz_usleep(useconds_t usec)
{
	slept_ns += usec * 1000ULL;
	return 0;
}

int fuzz_clock_gettime(clockid_t clk, struct timespec *ts)
{
	unsigned long long ns;

	if (clock_gettime(clk, ts))
		return -1;
	if (clk == CLOCK_MONOTONIC) {
		ns = ts->tv_nsec + slept_ns;
		ts->tv_sec += ns / 1000000000ULL;
		ts->tv_nsec = ns % 1000000000ULL;
	}
	return 0;
}

/* A fresh window: the image, then zeros, every page mapped. */
static void map_window(int flags)
{
	void *p = mmap(window, REGISTRY_WINDOW, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | flags, -1, 0);

	if (p != window) {
		fprintf(stderr, "fuzz-registry: cannot map %#llx: %s\n",
			REGISTRY_BASE, strerror(errno));
		exit(1);
	}
	memset(unmapped, 0, sizeof(unmapped));
}

int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	static FILE *devnull;

	devnull = fopen("/dev/null", "w");
	if (!devnull)
		exit(1);
	debug_set_file(devnull);
	map_window(MAP_FIXED_NOREPLACE);
	report = getenv("FUZZ_VERBOSE");
	return 0;
}

static bool documented_error(int ret)
{
	switch (-ret) {
	case EPROTO:	/* not a registry perf reads, or broken */
	case EFBIG:	/* larger than perf reads */
	case EAGAIN:	/* the chunk table never settled */
	case EFAULT:	/* the descriptor cannot be read */
	case ESRCH:	/* nor read again: the process is gone */
		return true;
	default:
		return false;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const size_t max_entries = (64ULL << 20) / sizeof(struct registry_entry);
	struct registry_input in;
	unsigned long long start_ns;
	struct timespec ts;
	size_t image;
	unsigned long long ms;
	int ret;

	if (size < sizeof(in))
		return -1;
	memcpy(&in, data, sizeof(in));
	data += sizeof(in);
	size -= sizeof(in);
	nr_changes = in.nr_changes;
	if (nr_changes > REGISTRY_MAX_CHANGES || nr_changes * sizeof(*changes) > size)
		return -1;
	changes = (const void *)data;
	image = nr_changes * sizeof(*changes);
	data += image;
	size -= image;
	if (size > REGISTRY_WINDOW || in.desc >= REGISTRY_WINDOW)
		return -1;

	map_window(MAP_FIXED);
	memcpy(window, data, size);
	for (unsigned int i = 0; i < 64; i++)
		if (in.holes & (1ULL << i))
			unmap_page(i * REGISTRY_PAGE);
	reads = 0;

	fuzz_clock_gettime(CLOCK_MONOTONIC, &ts);
	start_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	ret = jit_registry__snapshot_data(getpid(), REGISTRY_BASE + in.desc,
					  true, NULL, NULL);
	fuzz_clock_gettime(CLOCK_MONOTONIC, &ts);
	ms = (ts.tv_sec * 1000000000ULL + ts.tv_nsec - start_ns) / 1000000;

	if (report)
		fprintf(stderr, "fuzz-registry: snapshot %d (%s), %lu reads in %llu ms\n",
			ret, ret < 0 ? strerror(-ret) : "entries", reads, ms);
	if (ret > (int)max_entries || (ret < 0 && !documented_error(ret))) {
		fprintf(stderr, "fuzz-registry: snapshot gave %d (%s)\n", ret,
			ret < 0 ? strerror(-ret) : "entries");
		abort();
	}
	/* 2 s to see the chunk table settle, and the reads of the last try */
	if (ms > 3000) {
		fprintf(stderr, "fuzz-registry: %lu reads in %llu ms, past perf's 2 s\n",
			reads, ms);
		abort();
	}
	return 0;
}
