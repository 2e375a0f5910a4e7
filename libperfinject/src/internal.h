/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __PERFINJECT_INTERNAL_H
#define __PERFINJECT_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include <urcu-bp.h>
#include <urcu/rculfhash.h>

#include "perfinject/perfinject.h"
#include "uapi_jit_code.h"

#define PI_HIDDEN __attribute__((visibility("hidden")))

/*
 * ThreadSanitizer does not see the ordering liburcu provides (it is not
 * instrumented), so tell it: publication of an entry is a release on the
 * entry, finding it an acquire; leaving a read-side critical section is
 * a release on pi_tsan_gp, and reclamation after a grace period an
 * acquire on it.
 */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define pi_tsan_release(p)	__tsan_release((void *)(p))
#define pi_tsan_acquire(p)	__tsan_acquire((void *)(p))
#else
#define pi_tsan_release(p)	do { } while (0)
#define pi_tsan_acquire(p)	do { } while (0)
#endif

extern PI_HIDDEN int pi_tsan_gp;

static inline void pi_read_lock(void)
{
	urcu_bp_read_lock();
}

static inline void pi_read_unlock(void)
{
	pi_tsan_release(&pi_tsan_gp);
	urcu_bp_read_unlock();
}

/* One live piece of code. Immutable once in the tables. */
struct pi_entry {
	struct cds_lfht_node	addr_node;
	struct cds_lfht_node	index_node;
	struct rcu_head		rcu;
	uint64_t		addr;
	uint64_t		len;
	uint64_t		code_index;	/* 0: none */
	uint64_t		dump_index;	/* code_index in the jitdump */
	uint64_t		slot;		/* in the published view */
	uint32_t		name_len;	/* without the NUL */
	char			name[];
};

/*
 * One operation of a chunk, resolved against the registry: the kernel
 * entry, what the file backends write, and the node it adds.
 */
struct pi_change {
	struct perf_jit_code_entry	kentry;
	const char			*name;
	uint32_t			name_len;
	uint64_t			dump_index;
	struct pi_entry			*add;	/* LOAD, MOVE */
};

struct pi_buf {
	char	*data;
	size_t	len;
	size_t	cap;
};

struct pi_file {
	int	fd;		/* -1: closed */
	void	*marker;	/* jitdump: the PROT_EXEC mapping */
	size_t	marker_len;
};

struct perfinject {
	/* Serialises writers, and orders records as the registry changes. */
	pthread_mutex_t		lock;
	struct cds_lfht		*by_addr;
	struct cds_lfht		*by_index;
	unsigned long		nr_live;	/* under lock */
	unsigned int		backends;	/* active */
	pid_t			pid;		/* owner of the files */
	char			*dir;
	struct pi_file		perfmap;
	struct pi_file		jitdump;
	uint64_t		next_dump_index;
	struct pi_change	*changes;	/* PERF_JIT_CODE_MAX_ENTRIES */
	struct perf_jit_code_entry *kentries;
	struct pi_buf		out;		/* file records */
	struct pi_buf		code;		/* code bytes for jitdump */
	struct perfinject	*next;		/* all handles, for fork */
};

/* registry.c */
PI_HIDDEN int pi_registry_init(struct perfinject *pi);
PI_HIDDEN void pi_registry_fini(struct perfinject *pi);
PI_HIDDEN struct pi_entry *pi_lookup_addr(struct perfinject *pi,
					  uint64_t addr);
PI_HIDDEN struct pi_entry *pi_lookup_index(struct perfinject *pi,
					   uint64_t code_index);
PI_HIDDEN struct pi_entry *pi_entry_new(uint64_t addr, uint64_t len,
					uint64_t code_index, const char *name,
					uint32_t name_len);
PI_HIDDEN void pi_entry_free(struct pi_entry *e);
PI_HIDDEN void pi_registry_commit(struct perfinject *pi,
				  struct pi_change *chg, unsigned int nr);
PI_HIDDEN int pi_publish_reserve(uint64_t n);
PI_HIDDEN void pi_publish_unreserve(uint64_t n);
PI_HIDDEN void pi_publish_lock(void);
PI_HIDDEN void pi_publish_unlock(void);

/* backend_kernel.c */
PI_HIDDEN int pi_kernel_probe(void);
PI_HIDDEN int pi_kernel_send(struct perfinject *pi,
			     const struct perf_jit_code_entry *entries,
			     unsigned int nr);

/* backend_files.c */
PI_HIDDEN int pi_safe_create(const char *path, int *fdp);
PI_HIDDEN int pi_perfmap_open(struct perfinject *pi);
PI_HIDDEN int pi_jitdump_open(struct perfinject *pi);
PI_HIDDEN void pi_files_close(struct perfinject *pi, bool final);
PI_HIDDEN void pi_files_emit(struct perfinject *pi,
			     const struct pi_change *chg, unsigned int nr);
PI_HIDDEN int pi_code_readable(struct perfinject *pi, uint64_t addr,
			       uint64_t len);

static inline int pi_err(int err)
{
	errno = -err;
	return err;
}

int pi_peek(pid_t pid, uint64_t addr, void *buf, size_t len);

#endif /* __PERFINJECT_INTERNAL_H */
