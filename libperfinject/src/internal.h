/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __PERFINJECT_INTERNAL_H
#define __PERFINJECT_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "perfinject/perfinject.h"
#include "uapi_jit_code.h"

#define PI_HIDDEN __attribute__((visibility("hidden")))

#include "index.h"

#define PI_FILE_BACKENDS (PERFINJECT_BACKEND_PERFMAP | \
			  PERFINJECT_BACKEND_JITDUMP)

/*
 * One live piece of code. Immutable once in the indexes: with URCU=1,
 * perfinject__find() reads it without pi->lock, and only next_free (which
 * no reader reads) is written after it went in.
 */
struct pi_entry {
	struct pi_entry		*next_free;	/* retired in a commit */
#ifdef PI_URCU
	struct cds_lfht_node	addr_node;	/* in pi->by_addr */
#endif
	uint64_t		addr;
	uint64_t		len;
	uint64_t		code_index;	/* 0: none */
	uint64_t		dump_index;	/* code_index in the jitdump */
	uint64_t		slot;		/* in the published view */
	uint32_t		kind;		/* enum perfinject_kind */
	uint32_t		tier;
	uint32_t		name_len;	/* without the NUL */
	/*
	 * The registry's data (PERFINJECT_F_REGISTRY_DATA): payloads as
	 * struct perfinject_registry_data describes, from pi_data_build()
	 * or pi_data_move() (shared by the entries a move made, counted),
	 * never changed while an entry that has it is live; NULL: none.
	 */
	uint32_t		data_size;
	void			*data;
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
	/*
	 * LOAD: the caller's options, checked and valid during the call:
	 * &lopts, or all zero (pi_no_opts) when it gave none.
	 */
	const struct perfinject_load_opts *lo;
	struct perfinject_load_opts	lopts;
};

extern PI_HIDDEN const struct perfinject_load_opts pi_no_opts;

/*
 * Which change of the chunk being resolved last touched a key: an
 * open-addressing table stamped with the chunk's generation, so that it
 * never needs clearing. 4 slots per change: a move touches two keys.
 */
#define PI_CHUNK_HASH	(4 * PERF_JIT_CODE_MAX_ENTRIES)

/*
 * Free published slots a handle can own: what it keeps between calls,
 * a chunk's loads and a margin, and a chunk's unloads on top, so that a
 * commit never gives slots back and can be undone exactly.
 */
#define PI_OWN_SLOTS	(2 * PERF_JIT_CODE_MAX_ENTRIES + 128)

struct pi_chunk_slot {
	uint64_t	key;
	uint32_t	gen;
	uint32_t	change;
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
	/*
	 * Serialises writers, and orders records as the registry changes:
	 * a change is resolved, committed and sent to the kernel (and the
	 * files) under it, so that a load reaches the kernel before an
	 * unload of the same address that another thread makes once the
	 * load returned or once it found the code, and perf never sees the
	 * unload first. The address index being readable without it
	 * (URCU=1, index.h) changes nothing there: only writers send.
	 */
	pthread_mutex_t		lock;
	struct pi_addr_index	by_addr;	/* index.h */
	struct pi_index		by_index;
	size_t			nr_live;	/* atomic reads */
	unsigned int		backends;	/* active */
	bool			publish;	/* in the registry */
	bool			keep_data;	/* and its data */
	unsigned long		refs;		/* under default_lock */
	pid_t			pid;		/* owner of the files */
	unsigned long		fork_gen;	/* pi_fork_gen at pid */
	uint32_t		chunk_gen;
	struct pi_chunk_slot	*chunk_addr;	/* PI_CHUNK_HASH */
	struct pi_chunk_slot	*chunk_index;
	struct pi_entry		*gone;		/* retired by the last commit */
	/*
	 * Retired entries that a reader without pi->lock may still hold
	 * (PI_ADDR_LOCKLESS_READS), freed after a grace period.
	 */
	struct pi_entry		*retired;
	unsigned int		nr_retired;
	uint64_t		dump_next;	/* jitdump indices taken: */
	uint64_t		dump_end;	/* (dump_next, dump_end] */
	uint64_t		*own;		/* free published slots */
	unsigned int		nr_own;		/* of PI_OWN_SLOTS */
	char			*dir;
	struct pi_file		perfmap;
	struct pi_file		jitdump;
	struct pi_change	*changes;	/* PERF_JIT_CODE_MAX_ENTRIES */
	struct perf_jit_code_entry *kentries;
	struct pi_buf		out;		/* file records */
	struct pi_buf		info;		/* jitdump debug/unwind records */
	struct perfinject	*next;		/* all handles, for fork */
};

/* The splitmix64 finaliser: code addresses share their low bits. */
static inline uint64_t pi_hash(uint64_t key)
{
	key ^= key >> 30;
	key *= 0xbf58476d1ce4e5b9ULL;
	key ^= key >> 27;
	key *= 0x94d049bb133111ebULL;
	key ^= key >> 31;
	return key;
}

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
PI_HIDDEN int pi_registry_reserve(struct perfinject *pi, size_t loads);
PI_HIDDEN void pi_registry_commit(struct perfinject *pi,
				  struct pi_change *chg, unsigned int nr);
PI_HIDDEN void pi_registry_undo(struct perfinject *pi, struct pi_change *chg,
				unsigned int nr);
PI_HIDDEN void pi_registry_reap(struct perfinject *pi);
PI_HIDDEN void pi_registry_for_each(struct perfinject *pi,
				    void (*fn)(struct pi_entry *e, void *ctx),
				    void *ctx);
PI_HIDDEN void pi_publish_lock(void);
PI_HIDDEN void pi_publish_unlock(void);
PI_HIDDEN void pi_registry_free_retired(struct pi_entry *list);

/*
 * Retired entries a handle keeps before it waits for a grace period, with
 * PI_ADDR_LOCKLESS_READS. urcu-bp's synchronize_rcu() makes two
 * membarrier() calls and changes the signal mask twice, some
 * microseconds, where a load and an unload take some hundred
 * nanoseconds; and while a reader that the scheduler took off its CPU
 * holds a read-side critical section, it sleeps 10 ms at a time. One
 * wait per PI_RETIRE_BATCH entries costs a few nanoseconds each, and
 * holds at most that many entries (about a megabyte) per handle.
 */
#define PI_RETIRE_BATCH	8192

/*
 * With pi->lock held: the retired entries, once there are
 * PI_RETIRE_BATCH, for pi_registry_free_retired() after the caller
 * dropped pi->lock; else NULL. Always NULL in the default build.
 */
static inline struct pi_entry *
pi_registry_take_retired(struct perfinject *pi)
{
	struct pi_entry *list = pi->retired;

	if (!PI_ADDR_LOCKLESS_READS || pi->nr_retired < PI_RETIRE_BATCH)
		return NULL;
	pi->retired = NULL;
	pi->nr_retired = 0;
	return list;
}

/* backend_kernel.c */
PI_HIDDEN int pi_kernel_probe(void);
PI_HIDDEN int pi_kernel_send(struct perfinject *pi,
			     const struct perf_jit_code_entry *entries,
			     unsigned int nr, unsigned int *sent);
PI_HIDDEN int pi_kernel_send_changes(struct perfinject *pi,
				     const struct pi_change *chg,
				     unsigned int nr, unsigned int *sent);

/* data.c */
PI_HIDDEN int pi_data_build(const struct perfinject_load_opts *o,
			    uint64_t addr, uint64_t len, const char *name,
			    void **data, uint32_t *size);
PI_HIDDEN int pi_data_move(const void *data, uint32_t size, int64_t delta,
			   void **out);
PI_HIDDEN void pi_data_put(void *data);
PI_HIDDEN const struct perfinject_registry_data *
pi_data_next(const void *data, uint32_t size, size_t *off);

/* backend_files.c */
PI_HIDDEN int pi_safe_create(const char *path, int *fdp, bool *created);
PI_HIDDEN int pi_perfmap_open(struct perfinject *pi);
PI_HIDDEN int pi_jitdump_open(struct perfinject *pi);
PI_HIDDEN void pi_files_close(struct perfinject *pi, bool final);
PI_HIDDEN void pi_files_close_some(struct perfinject *pi, unsigned int which,
				   bool final);
PI_HIDDEN void pi_files_emit(struct perfinject *pi,
			     const struct pi_change *chg, unsigned int nr);
PI_HIDDEN void pi_files_emit_to(struct perfinject *pi,
				const struct pi_change *chg, unsigned int nr,
				unsigned int which);
PI_HIDDEN bool pi_jitdump_fits(uint64_t name_len, uint64_t len,
			       const struct perfinject_load_opts *o);

static inline int pi_err(int err)
{
	errno = -err;
	return err;
}

/* Bumped in the child after fork(): cheaper than getpid() per call. */
extern PI_HIDDEN unsigned long pi_fork_gen;
PI_HIDDEN pid_t pi_gettid(void);

/* Messages for the runtime: perfinject_set_print(). */
PI_HIDDEN void pi_log(enum perfinject_print_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define pi_warn(...)	pi_log(PERFINJECT_WARN, __VA_ARGS__)
#define pi_debug(...)	pi_log(PERFINJECT_DEBUG, __VA_ARGS__)

PI_HIDDEN int pi_peek(pid_t pid, uint64_t addr, void *buf, size_t len);

#endif /* __PERFINJECT_INTERNAL_H */
