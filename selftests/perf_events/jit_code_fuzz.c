// SPDX-License-Identifier: GPL-2.0
/*
 * A seeded fuzzer for PR_PERF_JIT_CODE and PERF_EVENT_IOC_JIT_CODE.
 *
 * Each call starts valid; four in five get one to four fields mutated,
 * with random or boundary values: sizes, flags, operations, entry counts,
 * addresses, names, extra prctl arguments, and pointers into unmapped,
 * read-only and guard pages and kernel addresses. DATA entries carry line
 * tables and unwind information, valid or with a field of the payload,
 * its type, size or address mutated; some loads describe readable memory,
 * whose bytes the kernel copies. One thread munmaps and
 * maps again a page that entries and names point into; another opens,
 * enables, disables and closes events (per-task, inherited, CPU-wide,
 * without the jit_code bit) under the calls; now and then a child forks,
 * calls and exits.
 *
 * Every call must return what the ABI allows for its input: a valid prctl
 * consumes all its entries, a probe (no args) the mask of operations, any
 * other call no more entries than it passed, or an errno the ABI gives. A
 * listener on the calling thread that is never closed is drained after
 * each call: every record must be well formed (known type, sizes, a
 * NUL-terminated name padded with zero bytes, data pieces in order after
 * their load, code bytes equal to the memory they were copied from), and
 * it must hold exactly the records of the entries that call consumed, no
 * more and no fewer: one for each entry but DATA, and for the listener,
 * which asks for bytes and data, a piece for each 16 KiB of a DATA
 * entry's payload and of the readable bytes of a load.
 *
 * JIT_FUZZ_SEED (default 1) and JIT_FUZZ_CALLS (default 30000) set the
 * run; the same seed makes the same calls. Run as root, the unprivileged
 * case drops to uid and gid 65534 in a child and fuzzes there too.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/prctl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"

#include "jit_code.h"

#define OWN_PAGES	64
#define CHURN_PAGES	4
#define CHURN_EVENTS	6
#define ENTRY_PAGES	16
#define PAYLOAD_PAGES	24
/* read-only code: more than one load's bytes, then a guard page */
#define CODE_BYTES	(PERF_JIT_CODE_BYTES_MAX + 65536)
#define NAMES_MAX	8
#define PAYLOADS_MAX	8
#define SCRATCH_SLOTS	8
#define SCRATCH_SIZE	4096
#define PIECE_SIZE	16384	/* data bytes in one record, at most */
#define BIG_DEPTH	1700	/* frames of the big line table: 3 pieces */

/* The arena's pages, by index. */
enum {
	PG_NAMES,		/* read-write */
	PG_EDGE,		/* read-write, ends without a NUL */
	PG_GUARD,		/* PROT_NONE */
	PG_RO,			/* read-only: entries and names */
	PG_HOLE,		/* unmapped */
	PG_RACE,		/* munmapped and mapped again by a thread */
	PG_PAYLOAD,		/* read-write: payloads, then scratch */
	PG_ENTRIES = PG_PAYLOAD + PAYLOAD_PAGES,	/* args, then entries */
	PG_CODE = PG_ENTRIES + ENTRY_PAGES,	/* CODE_BYTES, then a guard */
};

/* A valid payload for a DATA entry. */
struct payload {
	const void			*data;
	__u32				type;
	__u32				size;
};

/* A stream of data pieces as the listener reads them. */
struct stream {
	bool				open;	/* a piece may follow */
	bool				lenient; /* records were lost */
	__u32				type, next, total;
	__u64				addr, code_index;
	bool				load;	/* a LOAD came last */
	__u64				load_addr, load_index;
};

struct fuzz {
	__u64				rng;
	long				page;
	char				*arena;
	const char			*good[NAMES_MAX];	/* valid names */
	const char			*bad[NAMES_MAX];	/* not */
	unsigned int			nr_good, nr_bad;
	struct payload			payloads[PAYLOADS_MAX];
	struct payload			big;	/* over one piece */
	unsigned int			nr_payloads, scratch_next;
	pid_t				pid, tid, child;
	bool				root;

	struct ev			own;
	__u64				consumed;	/* by calls on @own */
	__u64				expected;	/* their records */
	__u64				delivered, lost, bytes;
	__u64				pieces[PERF_JIT_CODE_DATA_TYPE_MAX];
	struct stream			stream;

	/* events the churn thread owns; fds read by the fuzzer, racily */
	int				churn_fd[CHURN_EVENTS];
	pthread_t			churn_thread, race_thread;
	bool				stop;	/* atomic */
	bool				race_lost;	/* page taken by others */
	unsigned long			churn_opened, race_cycles;

	/* results */
	unsigned long			calls, prctls, ioctls, ok, entries;
	unsigned long			by_errno[160];
	unsigned long			forks, probes;
	unsigned long			partial, flushes;
	char				why[512];
};

static __u64 rnd(struct fuzz *f)
{
	__u64 z = (f->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static __u32 below(struct fuzz *f, __u32 n)
{
	return rnd(f) % n;
}

static bool chance(struct fuzz *f, unsigned int percent)
{
	return below(f, 100) < percent;
}

static char *pg(struct fuzz *f, int i)
{
	return f->arena + (long)i * f->page;
}

/* Hand a buffer's records back to the kernel unread. */
static void ev_skip(struct ev *ev)
{
	__u64 head = __atomic_load_n(&ev->page->data_head, __ATOMIC_ACQUIRE);

	__atomic_store_n(&ev->page->data_tail, head, __ATOMIC_RELEASE);
}

/*
 * Why a record of the own listener is malformed, or NULL. A JIT_CODE
 * record is the fixed part, for a load a name padded with zero bytes to
 * 8, and sample_id.
 */
static const char *record_wrong(const unsigned char *buf, __u16 size)
{
	const struct jit_record *rec = (const void *)buf;
	size_t name_end, len, i;

	if (rec->header.type == PERF_RECORD_LOST)
		return size == 8 + 16 + sizeof(struct sample_id) ? NULL :
		       "LOST record of the wrong size";
	if (rec->header.type != PERF_RECORD_JIT_CODE)
		return "a record type the listener did not ask for";
	if (size < JIT_RECORD_MIN)
		return "JIT_CODE record shorter than its fixed part";
	if (rec->op < PERF_JIT_CODE_LOAD || rec->op > PERF_JIT_CODE_FLUSH)
		return "JIT_CODE record with an unknown op";
	if (rec->flags & ~PERF_JIT_CODE_FLAGS_SYNTHESIZED)
		return "JIT_CODE record with unknown flags";
	if (!rec->len || rec->addr + rec->len < rec->addr)
		return "JIT_CODE record with an empty or wrapping range";
	name_end = size - sizeof(struct sample_id);
	if (rec->op != PERF_JIT_CODE_LOAD)
		return name_end == sizeof(*rec) ? NULL :
		       "JIT_CODE record with a name it should not have";
	if (name_end == sizeof(*rec))
		return "a load without a name";
	len = strnlen(rec->name, name_end - sizeof(*rec));
	if (!len || sizeof(*rec) + len == name_end)
		return "a load whose name is empty or not NUL-terminated";
	if (len >= PERF_JIT_CODE_NAME_MAX)
		return "a name longer than PERF_JIT_CODE_NAME_MAX";
	if (((sizeof(*rec) + len + 1 + 7) & ~(size_t)7) != name_end)
		return "name padded to more than the next 8 bytes";
	for (i = sizeof(*rec) + len; i < name_end; i++)
		if (buf[i])
			return "a padding byte after the name is not zero";
	return NULL;
}

/*
 * Why a data piece of the own listener is wrong, or NULL: its layout, its
 * place after the piece before or after its load, what the kernel
 * checked in a payload's header, and code bytes against the memory they
 * were copied from. Updates the stream.
 */
static const char *piece_wrong(struct fuzz *f, const unsigned char *buf,
			       __u16 size)
{
	static const __u32 max[PERF_JIT_CODE_DATA_TYPE_MAX] = {
		[PERF_JIT_CODE_DATA_BYTES]	= PERF_JIT_CODE_BYTES_MAX,
		[PERF_JIT_CODE_DATA_LINES]	= PERF_JIT_CODE_LINES_MAX,
		[PERF_JIT_CODE_DATA_UNWIND]	= PERF_JIT_CODE_UNWIND_MAX,
	};
	const struct data_record *rec = (const void *)buf;
	struct stream *st = &f->stream;
	const char *code = pg(f, PG_CODE);
	__u64 code_start = (uintptr_t)code, code_end;
	size_t padded, i;

	if (size < sizeof(*rec) + sizeof(struct sample_id))
		return "JIT_CODE_DATA record shorter than its fixed part";
	if (rec->type <= PERF_JIT_CODE_DATA_UNKNOWN ||
	    rec->type >= PERF_JIT_CODE_DATA_TYPE_MAX)
		return "JIT_CODE_DATA record of an unknown type";
	if ((rec->flags & ~PERF_JIT_CODE_FLAGS_SYNTHESIZED) || rec->__reserved)
		return "JIT_CODE_DATA record with unknown flags or reserved bits";
	if (!rec->size || rec->size > PIECE_SIZE || rec->total > max[rec->type] ||
	    rec->offset > rec->total || rec->size > rec->total - rec->offset)
		return "a piece that is empty, over 16 KiB or outside its data";
	padded = ALIGN8(rec->size);
	if (size != sizeof(*rec) + padded + sizeof(struct sample_id))
		return "a piece whose record size is not its data's";
	for (i = rec->size; i < padded; i++)
		if (rec->data[i])
			return "a piece that is not zero-padded";

	if (rec->offset) {
		if (!st->lenient &&
		    (!st->open || st->type != rec->type ||
		     st->addr != rec->addr ||
		     st->code_index != rec->code_index ||
		     st->next != rec->offset || st->total != rec->total))
			return "a piece that does not follow the piece before";
	} else if (rec->type == PERF_JIT_CODE_DATA_BYTES) {
		if (!st->lenient &&
		    (!st->load || st->load_addr != rec->addr ||
		     st->load_index != rec->code_index))
			return "code bytes that do not follow their load";
	} else if (rec->type == PERF_JIT_CODE_DATA_LINES) {
		const struct perf_jit_code_lines *l = (const void *)rec->data;

		if (rec->size < sizeof(*l) ||
		    sizeof(*l) + (__u64)l->nr_lines * sizeof(l->lines[0]) +
		    l->strings_size != rec->total)
			return "a line table whose header does not give its size";
	} else {
		const struct perf_jit_code_unwind *u = (const void *)rec->data;

		if (rec->size < sizeof(*u) ||
		    u->format != PERF_JIT_CODE_UNWIND_EH_FRAME ||
		    u->eh_frame_hdr_size >= rec->total - sizeof(*u))
			return "unwind information the kernel should have refused";
	}

	/* Bytes of the code pages, from this process or the sleeper. */
	code_end = code_start + CODE_BYTES;
	if (rec->type == PERF_JIT_CODE_DATA_BYTES &&
	    (rec->pid == (__u32)f->pid || rec->pid == (__u32)f->child)) {
		for (i = 0; i < rec->size; i++) {
			__u64 at = rec->addr + rec->offset + i;

			if (at >= code_start && at < code_end &&
			    rec->data[i] != (unsigned char)code[at - code_start])
				return "code bytes that are not the code's";
		}
	}

	st->load = false;
	st->open = rec->offset + rec->size < rec->total;
	st->type = rec->type;
	st->addr = rec->addr;
	st->code_index = rec->code_index;
	st->next = rec->offset + rec->size;
	st->total = rec->total;
	f->pieces[rec->type]++;
	return NULL;
}

/*
 * Read every record of the own listener; 0, or -1 with f->why set. A
 * LOST record counts the records it stands for, and the pieces after it
 * need not follow those before.
 */
static int own_drain(struct fuzz *f)
{
	struct ev *ev = &f->own;
	__u64 head = __atomic_load_n(&ev->page->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = ev->page->data_tail;
	unsigned char buf[65536];

	while (tail != head) {
		struct perf_event_header hdr;
		const struct jit_record *rec = (const void *)buf;
		const char *why;

		rb_copy(ev, tail, &hdr, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size % 8 ||
		    hdr.size > head - tail) {
			snprintf(f->why, sizeof(f->why),
				 "record header type %u size %u at %llu of %llu",
				 hdr.type, hdr.size, (unsigned long long)tail,
				 (unsigned long long)head);
			return -1;
		}
		rb_copy(ev, tail, buf, hdr.size);
		if (hdr.type == PERF_RECORD_JIT_CODE_DATA)
			why = piece_wrong(f, buf, hdr.size);
		else
			why = record_wrong(buf, hdr.size);
		if (why) {
			snprintf(f->why, sizeof(f->why), "%s (type %u, size %u)",
				 why, hdr.type, hdr.size);
			return -1;
		}
		if (hdr.type == PERF_RECORD_LOST) {
			f->lost += ((__u64 *)buf)[2];
			f->stream.lenient = true;
			f->stream.open = false;
			f->stream.load = false;
		} else {
			f->delivered++;
		}
		if (hdr.type == PERF_RECORD_JIT_CODE) {
			f->stream.lenient = false;
			f->stream.open = false;
			f->stream.load = rec->op == PERF_JIT_CODE_LOAD;
			f->stream.load_addr = rec->addr;
			f->stream.load_index = rec->code_index;
		}
		f->bytes += hdr.size;
		tail += hdr.size;
	}
	__atomic_store_n(&ev->page->data_tail, tail, __ATOMIC_RELEASE);
	return 0;
}

/* Opens and closes events under the calls, and drops what they get. */
static void *churn(void *p)
{
	struct fuzz *f = p;
	struct ev evs[CHURN_EVENTS];
	__u64 rng = f->rng ^ 0x636875726eULL;
	int i;

	for (i = 0; i < CHURN_EVENTS; i++)
		evs[i].fd = -1, evs[i].map = NULL;
	while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED)) {
		struct perf_event_attr attr;
		pid_t pid = f->tid;
		int cpu = -1;
		__u64 r;

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		r = rng >> 33;
		i = r % CHURN_EVENTS;
		if (evs[i].fd >= 0) {
			switch ((r >> 8) % 4) {
			case 0:
				__atomic_store_n(&f->churn_fd[i], -1,
						 __ATOMIC_RELEASE);
				ev_close(&evs[i]);
				break;
			case 1:
				ioctl(evs[i].fd, PERF_EVENT_IOC_DISABLE, 0);
				break;
			case 2:
				ioctl(evs[i].fd, PERF_EVENT_IOC_ENABLE, 0);
				break;
			default:
				ev_skip(&evs[i]);
				break;
			}
		} else {
			attr_init(&attr, (r >> 8) % 5 != 0);
			if (attr.jit_code) {
				attr.jit_code_data = (r >> 20) & 1;
				attr.jit_code_bytes = (r >> 21) & 1;
			}
			switch ((r >> 12) % 4) {
			case 0:		/* per-task, inherited */
				attr.inherit = 1;
				break;
			case 1:		/* CPU-wide */
				pid = -1;
				cpu = (r >> 16) % 2;
				break;
			case 2:		/* the whole process, by its pid */
				pid = f->pid;
				break;
			}
			if (!ev_open(&evs[i], &attr, pid, cpu, CHURN_PAGES)) {
				f->churn_opened++;
				__atomic_store_n(&f->churn_fd[i], evs[i].fd,
						 __ATOMIC_RELEASE);
			}
		}
		for (i = 0; i < CHURN_EVENTS; i++)
			if (evs[i].fd >= 0)
				ev_skip(&evs[i]);
		usleep(200);
	}
	for (i = 0; i < CHURN_EVENTS; i++) {
		__atomic_store_n(&f->churn_fd[i], -1, __ATOMIC_RELEASE);
		if (evs[i].fd >= 0)
			ev_close(&evs[i]);
	}
	return NULL;
}

/* Fill the race page: entries at its start, a name after them. */
static void race_fill(struct fuzz *f, char *p)
{
	struct perf_jit_code_entry *e = (void *)p;
	int i;

	for (i = 0; i < 8; i++) {
		e[i].op = PERF_JIT_CODE_LOAD;
		e[i].addr = 0x40000000ULL + i * 0x100;
		e[i].len = 0x40;
		e[i].name = (uintptr_t)(p + 1024);
	}
	memcpy(p + 1024, "race_page_name", sizeof("race_page_name"));
}

/* munmaps the race page and maps it again, under the calls. */
static void *race(void *p)
{
	struct fuzz *f = p;
	char *page = pg(f, PG_RACE);

	while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED)) {
		munmap(page, f->page);
		sched_yield();
		if (mmap(page, f->page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0) != page) {
			/* Another mapping took the address: stop here. */
			f->race_lost = true;
			break;
		}
		race_fill(f, page);
		f->race_cycles++;
		sched_yield();
	}
	return NULL;
}

static const __u64 interesting64[] = {
	0, 1, 7, 8, 0x40, 0x1000, 0x7fffffff, 0x80000000ULL, 0xffffffffULL,
	0x100000000ULL, 0x40000000ULL, 0x00007ffffffff000ULL,
	0x00007fffffffffffULL, 0x0000800000000000ULL, 0xffff800000000000ULL,
	0xffffffff80000000ULL, 0xfffffffffffff000ULL, ~0ULL, 1ULL << 63,
};

static __u64 any64(struct fuzz *f)
{
	if (chance(f, 60))
		return interesting64[below(f, ARRAY_SIZE(interesting64))] +
		       (chance(f, 20) ? (__s64)below(f, 5) - 2 : 0);
	return rnd(f) >> below(f, 64);
}

static __u32 any32(struct fuzz *f)
{
	static const __u32 v[] = { 0, 1, 2, 3, 4, 5, 8, 31, 32, 33, 40, 47,
				   48, 49, 56, 64, 1023, 1024, 1025, 4095,
				   4096, 4097, 0x7fffffff, 0x80000000,
				   0xffffffff };

	if (chance(f, 70))
		return v[below(f, ARRAY_SIZE(v))];
	return rnd(f);
}

/*
 * A pointer for a field that points to user memory: mostly bad ones. The
 * kernel writes to one place only, the size field of args it refuses as
 * too large, so no pointer here leads outside the arena but to unmapped
 * or kernel addresses.
 */
static __u64 any_ptr(struct fuzz *f, __u64 good)
{
	char *edge = pg(f, PG_EDGE);

	switch (below(f, 11)) {
	case 0:
		return 0;
	case 1:
		return (uintptr_t)pg(f, PG_GUARD) + below(f, f->page);
	case 2:
		return (uintptr_t)pg(f, PG_HOLE) + below(f, f->page);
	case 3:
		return (uintptr_t)pg(f, PG_RO) + below(f, f->page);
	case 4:
		return (uintptr_t)pg(f, PG_RACE) + below(f, 2) * 1024;
	case 5:
		return (uintptr_t)edge + f->page - 1 - below(f, 64);
	case 6:
		return 0xffff800000000000ULL + below(f, 4096);
	case 7:
		return good + 1 + below(f, 7);	/* misaligned */
	case 8:
		return good + 8 * below(f, 8);
	case 9:
		return 0xffffffff80000000ULL + rnd(f) % 0x7fffffff;
	default:
		return good;
	}
}

/*
 * A valid entry, with one of the test's names or payloads; a DATA entry
 * only if @data, entries of @entry_size having room for its fields. A
 * load is in the code pages at times, where its bytes can be read.
 */
static void entry_valid(struct fuzz *f, struct perf_jit_code_entry *e,
			bool data)
{
	memset(e, 0, sizeof(*e));
	e->op = PERF_JIT_CODE_LOAD + below(f, data ? 5 : 4);
	e->addr = 0x40000000ULL + below(f, 1 << 20) * 16;
	e->len = 1 + below(f, 4096);
	e->code_index = rnd(f);
	if (e->op == PERF_JIT_CODE_LOAD) {
		e->name = (uintptr_t)f->good[below(f, f->nr_good)];
		if (chance(f, 25))
			e->addr = (uintptr_t)pg(f, PG_CODE) +
				  below(f, CODE_BYTES - e->len);
	}
	if (e->op == PERF_JIT_CODE_MOVE)
		e->new_addr = 0x50000000ULL + below(f, 1 << 20) * 16;
	if (e->op == PERF_JIT_CODE_DATA) {
		const struct payload *p = &f->payloads[below(f, f->nr_payloads)];

		e->len = 64 + below(f, 4032);	/* past the tables' offsets */
		e->data = (uintptr_t)p->data;
		e->data_type = p->type;
		e->data_size = p->size;
	}
}

/* A copy of @e's payload with one field or byte changed, in scratch. */
static void payload_mutate(struct fuzz *f, struct perf_jit_code_entry *e)
{
	char *slot = pg(f, PG_PAYLOAD) + (PAYLOAD_PAGES * f->page -
		     SCRATCH_SLOTS * SCRATCH_SIZE) +
		     (f->scratch_next++ % SCRATCH_SLOTS) * SCRATCH_SIZE;
	__u32 size = e->data_size;

	if (e->op != PERF_JIT_CODE_DATA || !size || size > SCRATCH_SIZE ||
	    e->data < (uintptr_t)pg(f, PG_PAYLOAD) ||
	    e->data >= (uintptr_t)pg(f, PG_ENTRIES)) {
		e->data = (uintptr_t)slot;
		return;
	}
	memcpy(slot, (const void *)(uintptr_t)e->data, size);
	if (chance(f, 70)) {
		/* a header or line field: counts, offsets, depth, names */
		__u32 at = below(f, (size < 64 ? size : 64) / 4) * 4, v;

		v = chance(f, 50) ? any32(f) : *(__u32 *)(slot + at) +
					      (__s32)below(f, 5) - 2;
		memcpy(slot + at, &v, sizeof(v));
	} else {
		slot[below(f, size)] = rnd(f);
	}
	e->data = (uintptr_t)slot;
}

static void entry_mutate(struct fuzz *f, struct perf_jit_code_entry *e)
{
	switch (below(f, 13)) {
	case 0:
		e->op = chance(f, 50) ? below(f, 8) : any32(f);
		break;
	case 1:
		e->flags = any32(f);
		break;
	case 2:
		e->addr = any64(f);
		break;
	case 3:
		e->len = any64(f);
		break;
	case 4:
		e->new_addr = any64(f);
		break;
	case 5:
		e->name = chance(f, 50) ? (uintptr_t)f->bad[below(f, f->nr_bad)] :
				     any_ptr(f, e->name);
		break;
	case 6:
		e->code_index = any64(f);
		break;
	case 7:
		e->data = any_ptr(f, e->data);
		break;
	case 8:
		e->data_type = chance(f, 50) ? below(f, 6) : any32(f);
		break;
	case 9:
		switch (below(f, 4)) {
		case 0:
			e->data_size = any32(f);
			break;
		case 1:
			e->data_size += (__s32)below(f, 17) - 8;
			break;
		case 2:
			e->data_size = (chance(f, 50) ? PERF_JIT_CODE_LINES_MAX :
					PERF_JIT_CODE_UNWIND_MAX) + below(f, 2);
			break;
		default:
			e->data_size = 0;
			break;
		}
		break;
	case 10:
		payload_mutate(f, e);
		break;
	case 11:	/* valid, in pieces */
		memset(e, 0, sizeof(*e));
		e->op = PERF_JIT_CODE_DATA;
		e->addr = 0x40000000ULL + below(f, 1 << 20) * 16;
		e->len = 64 + below(f, 4032);
		e->code_index = rnd(f);
		e->data = (uintptr_t)f->big.data;
		e->data_type = f->big.type;
		e->data_size = f->big.size;
		break;
	default:	/* a load of the arena, up to the cap or a hole */
		memset(e, 0, sizeof(*e));
		e->op = PERF_JIT_CODE_LOAD;
		if (chance(f, 50)) {
			/* not the race page: what it holds changes */
			int page = below(f, PG_CODE - 1);

			e->addr = (uintptr_t)pg(f, page + (page >= PG_RACE)) +
				  below(f, f->page);
		} else {
			e->addr = (uintptr_t)pg(f, PG_CODE) +
				  below(f, CODE_BYTES + f->page);
		}
		e->len = chance(f, 3) ? any64(f) : 1 + below(f, 32 << 10);
		e->code_index = rnd(f);
		e->name = (uintptr_t)f->good[below(f, f->nr_good)];
		break;
	}
}

/*
 * The entry array of one call, at @base: nr entries of entry_size bytes,
 * valid ones with mutations, or random bytes. Returns the call's entries
 * pointer: @base, or a bad one.
 */
static void entries_make(struct fuzz *f, char *base, __u32 nr,
			 __u32 entry_size, unsigned int mutations)
{
	__u32 i;

	for (i = 0; i < nr; i++) {
		struct perf_jit_code_entry e;
		char *dst = base + (size_t)i * entry_size;

		entry_valid(f, &e, entry_size >= sizeof(e));
		if (mutations && chance(f, 30)) {
			entry_mutate(f, &e);
			mutations--;
		}
		memcpy(dst, &e, entry_size < sizeof(e) ? entry_size : sizeof(e));
		if (entry_size > sizeof(e)) {
			memset(dst + sizeof(e), 0, entry_size - sizeof(e));
			if (mutations && chance(f, 3))
				dst[sizeof(e) + below(f, entry_size -
						      sizeof(e))] = 1;
		}
	}
}

/* Entries or args at the end of the edge page, running into the guard. */
static char *at_edge(struct fuzz *f, size_t len)
{
	size_t back = len > 8 ? len - 8 * below(f, 3) : len;

	if (back > (size_t)f->page)
		back = f->page;
	return pg(f, PG_EDGE) + f->page - (back & ~(size_t)7);
}

static bool errno_expected(bool is_ioctl, int err)
{
	switch (err) {
	case EINVAL:
	case EFAULT:
	case E2BIG:
	case ENAMETOOLONG:
		return true;
	case EACCES:
	case ESRCH:
	case EAGAIN:
	case EBADF:
	case ENOTTY:
	case ENOBUFS:
		return is_ioctl;
	default:
		return false;
	}
}

/*
 * Whether [@addr, @addr + @len) is in the arena's pages whose mappings
 * never change, in this process as in the sleeper and every child:
 * there it can be read without asking the kernel.
 */
static bool steady(struct fuzz *f, __u64 addr, __u64 len)
{
	__u64 a = (uintptr_t)f->arena, p = f->page;

	if (addr < a || addr + len < addr)
		return false;
	return addr + len <= a + PG_GUARD * p ||
	       (addr >= a + PG_RO * p && addr + len <= a + PG_HOLE * p) ||
	       (addr >= a + PG_PAYLOAD * p &&
		addr + len <= a + PG_CODE * p + CODE_BYTES);
}

/* Read @len bytes of process @pid at @addr: false unless all can be. */
static bool peek(pid_t pid, __u64 addr, void *dst, size_t len)
{
	struct iovec local = { dst, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/*
 * The pieces of code bytes the kernel copies for a load from process
 * @pid: one for each 16 KiB up to the cap, until one cannot be read.
 */
static __u64 bytes_pieces(struct fuzz *f, pid_t pid, __u64 addr, __u64 len)
{
	static unsigned char buf[PIECE_SIZE];
	__u64 total = len < PERF_JIT_CODE_BYTES_MAX ? len :
			    PERF_JIT_CODE_BYTES_MAX;
	__u64 done, size, n = 0;

	for (done = 0; done < total; done += size, n++) {
		size = total - done < PIECE_SIZE ? total - done : PIECE_SIZE;
		if (addr + done < addr)
			break;
		if ((pid == f->pid || pid == f->child) &&
		    steady(f, addr + done, size))
			continue;
		if (!peek(pid, addr + done, buf, size))
			break;
	}
	return n;
}

/* Entry @i of @a, as the kernel read it; false if it cannot be read now. */
static bool entry_read(struct fuzz *f, const struct perf_jit_code_args *a,
		       __u32 i, struct perf_jit_code_entry *e)
{
	size_t n = a->entry_size < sizeof(*e) ? a->entry_size : sizeof(*e);
	__u64 at = a->entries + (__u64)i * a->entry_size;

	memset(e, 0, sizeof(*e));
	if (steady(f, at, n)) {
		memcpy(e, (const void *)(uintptr_t)at, n);
		return true;
	}
	return peek(f->pid, at, e, n);
}

/*
 * The records the own listener, which asks for bytes and data, gets for
 * entry @i of @a about process @pid: none for a DATA entry but a piece
 * for each 16 KiB of its payload; one for any other, and for a load a
 * piece for each 16 KiB of its bytes that can be read.
 */
static __u64 entry_records(struct fuzz *f, const struct perf_jit_code_args *a,
			   __u32 i, pid_t pid)
{
	struct perf_jit_code_entry e;

	/* Unreadable now, readable at the call: the race page's loads. */
	if (!entry_read(f, a, i, &e))
		return 1;
	if (e.op == PERF_JIT_CODE_DATA)
		return (e.data_size + (__u64)PIECE_SIZE - 1) / PIECE_SIZE;
	if (e.op == PERF_JIT_CODE_LOAD)
		return 1 + bytes_pieces(f, pid, e.addr, e.len);
	return 1;
}

/*
 * What the own listener gets from a call with args at @uargs (@a if they
 * are ours) that consumed @n entries: exactly @lo records, or for a
 * replay that ran out of room inside entry @n, up to @hi. Both stay as
 * they are (a record an entry) if the args cannot be read back.
 */
static void call_records(struct fuzz *f, const void *uargs,
			 const struct perf_jit_code_args *a, bool built,
			 __u32 n, __u64 *lo, __u64 *hi)
{
	struct perf_jit_code_args ka;
	pid_t pid;
	__u32 i;

	memset(&ka, 0, sizeof(ka));
	if (built) {
		ka = *a;
	} else if (!peek(f->pid, (uintptr_t)uargs, &ka.size, sizeof(ka.size)) ||
		   !peek(f->pid, (uintptr_t)uargs, &ka,
			 ka.size < sizeof(ka) ? ka.size : sizeof(ka))) {
		return;
	}
	pid = ka.pid ? ka.pid : f->pid;
	*lo = 0;
	for (i = 0; i < n; i++)
		*lo += entry_records(f, &ka, i, pid);
	*hi = *lo;
	if (n < ka.nr_entries)
		*hi += entry_records(f, &ka, n, pid);
}

/*
 * Have the listener's lost records told: write one valid record, and
 * read it with the LOST record in front of it. 0, or -1 with f->why set.
 */
static int lost_flush(struct fuzz *f)
{
	struct perf_jit_code_entry e = {
		.op = PERF_JIT_CODE_UNLOAD, .addr = 0x40000000ULL, .len = 16,
	};
	struct perf_jit_code_args a = {
		.size = sizeof(a), .entries = (uintptr_t)&e, .nr_entries = 1,
		.entry_size = sizeof(e),
	};
	long ret = prctl(PR_PERF_JIT_CODE, (unsigned long)&a, 0UL, 0UL, 0UL);

	if (ret != 1) {
		snprintf(f->why, sizeof(f->why),
			 "a prctl of one UNLOAD returned %ld (%s)", ret,
			 ret < 0 ? strerror(errno) : "no error");
		return -1;
	}
	f->consumed++;
	f->expected++;
	f->flushes++;
	return own_drain(f);
}

/*
 * One call. Returns 0, or -1 with f->why set when the result is not one
 * the ABI allows.
 */
static int fuzz_one(struct fuzz *f)
{
	char *area = pg(f, PG_ENTRIES);	/* args first, entries after */
	struct perf_jit_code_args *args = (void *)area, a;
	char *entries = area + 64;
	unsigned int mutations = chance(f, 20) ? 0 : 1 + below(f, 4);
	bool pristine = !mutations, is_ioctl = chance(f, 35), on_own = false;
	__u32 nr, entry_size;
	void *uargs = args;
	__u64 seen, got, lo, hi;
	long ret;
	int fd = f->own.fd, err;

	nr = chance(f, 80) ? 1 + below(f, 8) :
	     chance(f, 50) ? 1 + below(f, 40) : 1 + below(f, 1024);
	entry_size = chance(f, 85) ? sizeof(struct perf_jit_code_entry) :
		     chance(f, 50) ? 8 * (6 + below(f, 4)) : 48 + below(f, 24);
	/* Room in the entry pages, after args. */
	while ((size_t)nr * entry_size > ENTRY_PAGES * (size_t)f->page - 64)
		nr /= 2;
	entries_make(f, entries, nr, entry_size, mutations);

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.entries = (uintptr_t)entries;
	a.nr_entries = nr;
	a.entry_size = entry_size;
	while (mutations--) {
		switch (below(f, 9)) {
		case 0:
			a.size = any32(f);
			break;
		case 1:
			a.flags = chance(f, 50) ? 1u << below(f, 32) :
					any32(f);
			break;
		case 2:
			a.entries = any_ptr(f, a.entries);
			break;
		case 3:
			a.nr_entries = any32(f);
			break;
		case 4:
			a.entry_size = any32(f);
			break;
		case 5:
			a.pid = chance(f, 50) ? f->child : (__s32)any32(f);
			break;
		case 6:
			a.__reserved = any32(f);
			break;
		case 7:	/* entries running into the guard page */
			if (entry_size <= 4 * sizeof(struct perf_jit_code_entry)) {
				char *e = at_edge(f, (size_t)nr * entry_size);

				entries_make(f, e, (pg(f, PG_GUARD) - e) /
					     entry_size, entry_size, 0);
				a.entries = (uintptr_t)e;
			}
			break;
		default:	/* args in a bad place */
			uargs = (void *)(uintptr_t)any_ptr(f, (uintptr_t)args);
			break;
		}
	}
	memcpy(args, &a, sizeof(a));
	/* args that run into the guard page: as much of them as fits */
	if ((char *)uargs >= pg(f, PG_EDGE) && (char *)uargs < pg(f, PG_GUARD))
		memcpy(uargs, &a, pg(f, PG_GUARD) - (char *)uargs < (long)sizeof(a) ?
		       pg(f, PG_GUARD) - (char *)uargs : (long)sizeof(a));

	f->calls++;
	seen = f->delivered + f->lost;
	if (is_ioctl) {
		int pick = below(f, 10);

		if (pick < CHURN_EVENTS)
			fd = __atomic_load_n(&f->churn_fd[pick],
					     __ATOMIC_ACQUIRE);
		else if (pick == CHURN_EVENTS)
			fd = chance(f, 50) ? 0 : 1000;	/* not an event */
		on_own = fd == f->own.fd;
		f->ioctls++;
		ret = ioctl(fd, PERF_EVENT_IOC_JIT_CODE, uargs);
	} else {
		unsigned long extra = !pristine && chance(f, 2) ? any64(f) : 0;

		on_own = true;
		f->prctls++;
		ret = prctl(PR_PERF_JIT_CODE, (unsigned long)uargs,
			    extra & 1 ? extra : 0, extra & 2 ? extra : 0,
			    extra & 4 ? extra : 0);
	}
	err = errno;

	/* No args: the probe, which says what the kernel supports. */
	if (!uargs && ret >= 0) {
		if (ret != JIT_OPS_MASK) {
			snprintf(f->why, sizeof(f->why),
				 "the %s probe returned %ld", is_ioctl ?
				 "ioctl" : "prctl", ret);
			return -1;
		}
		f->probes++;
		return own_drain(f);
	}
	if (ret < 0) {
		f->by_errno[err < 160 ? err : 0]++;
		if (!errno_expected(is_ioctl, err) ||
		    (pristine && !is_ioctl)) {
			snprintf(f->why, sizeof(f->why),
				 "%s returned %s (nr_entries %u, entry_size %u, size %u, flags %#x, pid %d)",
				 is_ioctl ? "ioctl" : "prctl", strerror(err),
				 a.nr_entries, a.entry_size, a.size, a.flags,
				 a.pid);
			return -1;
		}
	} else {
		f->ok++;
		if ((uargs == args && ret > a.nr_entries) ||
		    ret > PERF_JIT_CODE_MAX_ENTRIES) {
			snprintf(f->why, sizeof(f->why),
				 "%s consumed %ld of %u entries",
				 is_ioctl ? "ioctl" : "prctl", ret,
				 a.nr_entries);
			return -1;
		}
		/* A call that nothing was wrong with takes all of it. */
		if (!is_ioctl && pristine && ret != a.nr_entries && nr <= 8) {
			const struct perf_jit_code_entry *e =
				(const void *)(entries + ret * entry_size);
			long again;

			/* The next call from there says what was wrong. */
			a.entries += ret * entry_size;
			a.nr_entries -= ret;
			memcpy(args, &a, sizeof(a));
			again = prctl(PR_PERF_JIT_CODE, (unsigned long)args,
				      0UL, 0UL, 0UL);
			snprintf(f->why, sizeof(f->why),
				 "a valid prctl of %u entries consumed %ld; from entry %ld (op %u, addr %#llx, len %#llx, new_addr %#llx, name %#llx) it returns %ld (%s)",
				 nr, ret, ret, e->op, (unsigned long long)e->addr,
				 (unsigned long long)e->len,
				 (unsigned long long)e->new_addr,
				 (unsigned long long)e->name, again,
				 again < 0 ? strerror(errno) : "no error");
			return -1;
		}
		/*
		 * Nobody unprivileged may name root's processes, whatever
		 * the entries, even DATA entries that write nothing.
		 */
		if (is_ioctl && !f->root && uargs == args &&
		    (a.pid == f->child || a.pid == 1)) {
			snprintf(f->why, sizeof(f->why),
				 "an unprivileged ioctl about pid %d consumed %ld entries",
				 a.pid, ret);
			return -1;
		}
		f->entries += ret;
		if (on_own)
			f->consumed += ret;
	}
	if (own_drain(f))
		return -1;
	/*
	 * The listener holds the records of what this call consumed, and
	 * nothing else; a replay that ran out of room may have written
	 * part of the next entry, which it did not consume.
	 */
	got = f->delivered + f->lost - seen;
	lo = on_own && ret > 0 ? ret : 0;
	hi = lo;
	if (on_own && (ret > 0 || (is_ioctl && ret < 0 && err == EAGAIN)))
		call_records(f, uargs, &a, uargs == args, lo, &lo, &hi);
	if (!is_ioctl)
		hi = lo;
	/*
	 * Records lost to a full buffer are told by a LOST record in front
	 * of the next record that fits: after a prctl that fell short,
	 * one more record is written, and what it brings counts.
	 */
	if (!is_ioctl && got < lo) {
		if (lost_flush(f))
			return -1;
		got = f->delivered + f->lost - seen - 1;
	}
	if (got < lo || got > hi) {
		snprintf(f->why, sizeof(f->why),
			 "%s on %s returned %ld, and the listener got %llu records, not %llu%s (nr_entries %u, entry_size %u, size %u, pid %d, args %s)",
			 is_ioctl ? "ioctl" : "prctl",
			 on_own ? "the listener" : "another fd", ret,
			 (unsigned long long)got, (unsigned long long)lo,
			 hi > lo ? " or a part of the next entry's" : "",
			 a.nr_entries, a.entry_size, a.size, a.pid,
			 uargs == args ? "as built" : "elsewhere");
		return -1;
	}
	f->partial += got > lo;
	f->expected += got;
	return 0;
}

/* A child that inherits the events, makes a few calls and exits. */
static void fork_one(struct fuzz *f)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct perf_jit_code_entry e[4];
		struct perf_jit_code_args a = {
			.size = sizeof(a),
			.entries = (uintptr_t)e,
			.nr_entries = 4,
			.entry_size = sizeof(e[0]),
		};
		int i;

		for (i = 0; i < 4; i++)
			entry_valid(f, &e[i], true);
		f->rng ^= getpid();
		for (i = 0; i < 16; i++)
			prctl(PR_PERF_JIT_CODE, (unsigned long)&a, 0UL, 0UL,
			      0UL);
		_exit(0);
	}
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		f->forks++;
	}
}

static void names_init(struct fuzz *f)
{
	char *rw = pg(f, PG_NAMES), *edge = pg(f, PG_EDGE);
	char *ro = pg(f, PG_RO);
	size_t max = PERF_JIT_CODE_NAME_MAX;

	/* Valid: short ones, the longest, and two that end at a hole. */
	snprintf(rw, 16, "fuzz_a");
	f->good[f->nr_good++] = rw;
	snprintf(rw + 16, 48, "Lfuzz/B;method(I)V");
	f->good[f->nr_good++] = rw + 16;
	memset(rw + 64, 'm', max);
	rw[64 + max - 1] = 0;
	f->good[f->nr_good++] = rw + 64;		/* max - 1 bytes */
	snprintf(ro, 32, "fuzz_read_only_name");
	f->good[f->nr_good++] = ro;
	memset(ro + f->page - max, 'r', max - 1);	/* the hole follows */
	ro[f->page - 1] = 0;
	f->good[f->nr_good++] = ro + f->page - max;
	f->good[f->nr_good++] = ro + f->page - 40;

	/* Not: too long, empty, running into the guard, on a moving page */
	memset(rw + 64 + max + 8, 'l', max + 8);
	rw[64 + 2 * max + 8] = 0;
	f->bad[f->nr_bad++] = rw + 64 + max + 8;	/* max bytes */
	f->bad[f->nr_bad++] = rw + 64 + max + 8 - 1 + max + 1;	/* "" */
	memset(edge, 'e', f->page);
	f->bad[f->nr_bad++] = edge + f->page - 40;
	f->bad[f->nr_bad++] = edge + f->page - max - 8;
	f->bad[f->nr_bad++] = pg(f, PG_RACE) + 1024;
}

/*
 * A line table at @p: a stack of @depth frames at offset 0, then a line
 * at each of @more offsets 16 bytes apart. Returns its size.
 */
static __u32 lines_make(void *p, unsigned int depth, unsigned int more)
{
	static const char strings[] = "\0fuzz.js\0inner";	/* 1, 9 */
	struct perf_jit_code_lines *l = p;
	unsigned int i, n = 0;

	for (i = 0; i < depth; i++, n++)
		l->lines[n] = (struct perf_jit_code_line){
			.line = 10 + i, .column = 1 + i % 7, .depth = i,
			.file = 1, .function = i ? 9 : 0,
		};
	for (i = 1; i <= more; i++, n++)
		l->lines[n] = (struct perf_jit_code_line){
			.offset = 16 * i, .line = 100 + i, .file = 1,
		};
	l->nr_lines = n;
	l->strings_size = sizeof(strings);
	memcpy(&l->lines[n], strings, sizeof(strings));
	return sizeof(*l) + n * sizeof(l->lines[0]) + sizeof(strings);
}

/* Unwind information at @p: @eh bytes of .eh_frame, @hdr of its header. */
static __u32 unwind_make(void *p, __u32 eh, __u32 hdr)
{
	struct perf_jit_code_unwind *u = p;
	unsigned char *b = (unsigned char *)(u + 1);
	__u32 i;

	u->format = PERF_JIT_CODE_UNWIND_EH_FRAME;
	u->eh_frame_hdr_size = hdr;
	u->addr = 0x40001000ULL;
	for (i = 0; i < eh + hdr; i++)
		b[i] = i * 13 + 5;
	return sizeof(*u) + eh + hdr;
}

/* The valid payloads, the big one first, in the payload pages. */
static void payloads_init(struct fuzz *f)
{
	/* Line tables: depth, more lines; unwind: .eh_frame, header bytes. */
	static const struct {
		__u32		type;
		unsigned int	a, b;
	} kinds[] = {
		{ PERF_JIT_CODE_DATA_LINES,	1,	0 },
		{ PERF_JIT_CODE_DATA_LINES,	3,	3 },
		{ PERF_JIT_CODE_DATA_LINES,	150,	0 },
		{ PERF_JIT_CODE_DATA_UNWIND,	24,	0 },
		{ PERF_JIT_CODE_DATA_UNWIND,	64,	8 },
	};
	char *at = pg(f, PG_PAYLOAD);
	struct payload *p;
	unsigned int i;

	f->big = (struct payload){ at, PERF_JIT_CODE_DATA_LINES,
				   lines_make(at, BIG_DEPTH, 0) };
	at += ALIGN8(f->big.size);
	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		p = &f->payloads[f->nr_payloads++];
		p->data = at;
		p->type = kinds[i].type;
		if (p->type == PERF_JIT_CODE_DATA_LINES)
			p->size = lines_make(at, kinds[i].a, kinds[i].b);
		else
			p->size = unwind_make(at, kinds[i].a, kinds[i].b);
		at += ALIGN8(p->size);
	}
}

static size_t arena_size(struct fuzz *f)
{
	return PG_CODE * f->page + CODE_BYTES + f->page;
}

static int arena_init(struct fuzz *f)
{
	char *code;
	size_t i;

	f->page = sysconf(_SC_PAGESIZE);
	f->arena = mmap(NULL, arena_size(f), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f->arena == MAP_FAILED)
		return -1;
	if (PAYLOAD_PAGES * f->page < 12 * SCRATCH_SIZE + SCRATCH_SLOTS *
					SCRATCH_SIZE)
		return -1;
	race_fill(f, pg(f, PG_RACE));
	names_init(f);
	payloads_init(f);
	code = pg(f, PG_CODE);
	for (i = 0; i < CODE_BYTES; i++)
		code[i] = i * 7 + i / 4093;
	entries_make(f, pg(f, PG_RO) + 64, 16, sizeof(struct perf_jit_code_entry),
		     0);
	if (mprotect(pg(f, PG_GUARD), f->page, PROT_NONE) ||
	    mprotect(pg(f, PG_RO), f->page, PROT_READ) ||
	    mprotect(code, CODE_BYTES, PROT_READ) ||
	    mprotect(code + CODE_BYTES, f->page, PROT_NONE) ||
	    munmap(pg(f, PG_HOLE), f->page))
		return -1;
	return 0;
}

static unsigned long env_ul(const char *name, unsigned long def)
{
	const char *s = getenv(name);

	return s && *s ? strtoul(s, NULL, 0) : def;
}

static void report(struct fuzz *f, const char *who)
{
	int e;

	ksft_print_msg("%s: %lu calls (%lu prctl, %lu ioctl), %lu forks\n",
		       who, f->calls, f->prctls, f->ioctls, f->forks);
	ksft_print_msg("%s: %lu probes (no args)\n", who, f->probes);
	ksft_print_msg("%s: %lu succeeded, with %lu entries\n", who, f->ok,
		       f->entries);
	ksft_print_msg("%s: own listener: %llu entries consumed, %llu records\n",
		       who, (unsigned long long)f->consumed,
		       (unsigned long long)f->delivered);
	ksft_print_msg("%s: own listener: %llu reported lost, %llu bytes\n",
		       who, (unsigned long long)f->lost,
		       (unsigned long long)f->bytes);
	ksft_print_msg("%s: own listener: pieces of bytes %llu, lines %llu, unwind %llu\n",
		       who,
		       (unsigned long long)f->pieces[PERF_JIT_CODE_DATA_BYTES],
		       (unsigned long long)f->pieces[PERF_JIT_CODE_DATA_LINES],
		       (unsigned long long)f->pieces[PERF_JIT_CODE_DATA_UNWIND]);
	ksft_print_msg("%s: replays that stopped inside an entry: %lu\n", who,
		       f->partial);
	ksft_print_msg("%s: prctls that lost records to a full buffer: %lu\n",
		       who, f->flushes);
	ksft_print_msg("%s: events opened under the calls: %lu\n", who,
		       f->churn_opened);
	ksft_print_msg("%s: race page unmapped %lu times\n", who,
		       f->race_cycles);
	for (e = 0; e < 160; e++)
		if (f->by_errno[e])
			ksft_print_msg("%s:   %-12s %lu\n", who,
				       e ? strerrorname_np(e) : "(other)",
				       f->by_errno[e]);
}

/*
 * Run @calls calls from a fuzz state on this thread. 0, or -1 with
 * f->why set.
 */
static int fuzz_run(struct fuzz *f, unsigned long calls, const char *who)
{
	struct perf_event_attr attr;
	unsigned long i;
	int ret = 0;

	f->pid = getpid();
	f->tid = sys_gettid();
	for (i = 0; i < CHURN_EVENTS; i++)
		f->churn_fd[i] = -1;
	attr_init(&attr, true);
	attr.jit_code_data = 1;
	attr.jit_code_bytes = 1;
	ret = ev_open(&f->own, &attr, 0, -1, OWN_PAGES);
	if (ret) {
		snprintf(f->why, sizeof(f->why), "perf_event_open: %s",
			 strerror(-ret));
		return -2;
	}
	if (pthread_create(&f->churn_thread, NULL, churn, f) ||
	    pthread_create(&f->race_thread, NULL, race, f)) {
		snprintf(f->why, sizeof(f->why), "pthread_create failed");
		return -1;
	}

	for (i = 0; i < calls && !ret; i++) {
		ret = fuzz_one(f);
		if (ret)
			snprintf(f->why + strlen(f->why),
				 sizeof(f->why) - strlen(f->why),
				 " at call %lu", i + 1);
		if (i % 20000 == 19999)
			fork_one(f);
	}
	__atomic_store_n(&f->stop, true, __ATOMIC_RELAXED);
	pthread_join(f->churn_thread, NULL);
	pthread_join(f->race_thread, NULL);
	if (!ret)
		ret = own_drain(f);
	if (!ret && f->delivered + f->lost != f->expected) {
		snprintf(f->why, sizeof(f->why),
			 "records delivered (%llu) + lost (%llu) != those of the entries consumed (%llu)",
			 (unsigned long long)f->delivered,
			 (unsigned long long)f->lost,
			 (unsigned long long)f->expected);
		ret = -1;
	}
	report(f, who);
	ev_close(&f->own);
	return ret;
}

FIXTURE(fuzz)
{
	struct fuzz f;
	unsigned long calls;
	pid_t sleeper;
};

FIXTURE_SETUP(fuzz)
{
	__u64 seed = env_ul("JIT_FUZZ_SEED", 1);

	memset(&self->f, 0, sizeof(self->f));
	self->f.own.fd = -1;
	self->sleeper = -1;
	if (prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 0UL, 0UL) < 0)
		SKIP(return, "kernel lacks PR_PERF_JIT_CODE");
	self->calls = env_ul("JIT_FUZZ_CALLS", 30000);
	self->f.rng = seed;
	self->f.root = geteuid() == 0;
	ASSERT_EQ(0, arena_init(&self->f));
	/* A live process other than this one, for the ioctl's pid. */
	self->sleeper = fork();
	ASSERT_LE(0, self->sleeper);
	if (!self->sleeper) {
		pause();
		_exit(0);
	}
	self->f.child = self->sleeper;
	ksft_print_msg("seed %llu, %lu calls (JIT_FUZZ_SEED, JIT_FUZZ_CALLS)\n",
		       (unsigned long long)seed, self->calls);
}

FIXTURE_TEARDOWN(fuzz)
{
	if (self->sleeper > 0) {
		kill(self->sleeper, SIGKILL);
		waitpid(self->sleeper, NULL, 0);
	}
}

TEST_F_TIMEOUT(fuzz, calls, 3600)
{
	int ret = fuzz_run(&self->f, self->calls, "calls");

	if (ret == -2)
		SKIP(return, "%s", self->f.why);
	if (self->f.race_lost)
		ksft_print_msg("the race page's address was taken; it stopped moving\n");
	EXPECT_EQ(0, ret) TH_LOG("%s", self->f.why);
}

static int paranoid_rw(const char *set, char *old, size_t len)
{
	const char *path = "/proc/sys/kernel/perf_event_paranoid";
	FILE *fp = fopen(path, "r+");
	int ret = -1;

	if (!fp)
		return -1;
	if (old && fgets(old, len, fp))
		ret = 0;
	if (set) {
		rewind(fp);
		ret = fputs(set, fp) < 0 ? -1 : 0;
	}
	if (fclose(fp))
		ret = -1;
	return ret;
}

/*
 * A quarter of the calls from a process without privileges, which may
 * ptrace nobody but itself: an ioctl about the sleeper or init must not
 * succeed. perf_event_paranoid is 2, upstream's default, for the run
 * (Debian's 3 lets the unprivileged open no event).
 */
TEST_F_TIMEOUT(fuzz, unprivileged, 3600)
{
	int pipefd[2], status;
	char bad[sizeof(self->f.why)] = "", old[16];
	pid_t pid;

	if (!self->f.root)
		SKIP(return, "needs root to drop privileges");
	ASSERT_EQ(0, paranoid_rw("2", old, sizeof(old)));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int ret;

		close(pipefd[0]);
		if (drop_to_nobody())
			_exit(3);
		self->f.root = false;
		ret = fuzz_run(&self->f, self->calls / 4, "unprivileged");
		if (ret && write(pipefd[1], self->f.why,
				 strlen(self->f.why)) < 0)
			ret = 1;
		_exit(ret == -2 ? 2 : ret ? 1 : 0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], bad, sizeof(bad) - 1) < 0)
		snprintf(bad, sizeof(bad), "(no reason)");
	close(pipefd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, paranoid_rw(old, NULL, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 2)
		SKIP(return, "unprivileged: %s (perf_event_paranoid)", bad);
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("unprivileged: %s", bad);
}

TEST_HARNESS_MAIN
