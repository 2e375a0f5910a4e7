/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libperfinject: describe JIT-compiled code to perf.
 *
 * A runtime creates one handle with perfinject__new() and reports every
 * piece of code it makes (perfinject__load()), throws away
 * (perfinject__unload()) or moves (perfinject__move()). The library
 * passes that on to the kernel (PR_PERF_JIT_CODE) where the kernel has
 * it, or writes the perf-map and jitdump files perf reads otherwise, and
 * keeps a registry of live code that a profiler attaching later can read
 * from outside the process (see doc/registry.md).
 *
 * Every function returning int returns 0 (or a count) on success and a
 * negative errno on failure, and also sets errno. Functions returning a
 * pointer return NULL and set errno on failure. All functions taking a
 * handle may be called from many threads at once; none is
 * async-signal-safe.
 */
#ifndef __PERFINJECT_PERFINJECT_H
#define __PERFINJECT_PERFINJECT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef PERFINJECT_API
#define PERFINJECT_API __attribute__((visibility("default")))
#endif

#define PERFINJECT_MAJOR_VERSION	0
#define PERFINJECT_MINOR_VERSION	2
#define PERFINJECT_PATCH_VERSION	0

/* True at compile time when these headers are at least @major.@minor. */
#define PERFINJECT_CHECK_VERSION(major, minor)				\
	(PERFINJECT_MAJOR_VERSION > (major) ||				\
	 (PERFINJECT_MAJOR_VERSION == (major) &&			\
	  PERFINJECT_MINOR_VERSION >= (minor)))

/* Version of the library the program runs with. */
PERFINJECT_API int perfinject_version_major(void);
PERFINJECT_API int perfinject_version_minor(void);
/*
 * True when the library the program runs with is at least @major.@minor.
 * Note: unlike io_uring_check_version(), true means the check passed.
 */
PERFINJECT_API bool perfinject_check_version(int major, int minor);

/*
 * Messages: what the library could not do and did not return as an
 * error (a backend that failed to open, a file write that failed, code
 * it could not read). By default warnings go to stderr, prefixed
 * "libperfinject: ". perfinject_set_print() replaces the function and
 * returns the previous one; NULL silences the library. The function may
 * be called from any thread that calls the library, with its locks held:
 * it must not call back into the library.
 */
enum perfinject_print_level {
	PERFINJECT_WARN,
	PERFINJECT_INFO,
	PERFINJECT_DEBUG,
};

typedef int (*perfinject_print_fn_t)(enum perfinject_print_level level,
				     const char *fmt, va_list ap);

PERFINJECT_API perfinject_print_fn_t
perfinject_set_print(perfinject_print_fn_t fn);

/* Where the records go; see perfinject__new(). */
#define PERFINJECT_BACKEND_KERNEL	(1U << 0) /* PR_PERF_JIT_CODE */
#define PERFINJECT_BACKEND_PERFMAP	(1U << 1) /* DIR/perf-PID.map */
#define PERFINJECT_BACKEND_JITDUMP	(1U << 2) /* DIR/jit-PID.dump */
#define PERFINJECT_BACKEND_ALL		(PERFINJECT_BACKEND_KERNEL |	\
					 PERFINJECT_BACKEND_PERFMAP |	\
					 PERFINJECT_BACKEND_JITDUMP)

/* perfinject_opts.flags */
/* Fail perfinject__new() if a requested backend cannot be used. */
#define PERFINJECT_F_STRICT		(1U << 0)
/* Ignore the PERFINJECT_BACKENDS environment variable. */
#define PERFINJECT_F_NO_ENV		(1U << 1)
/*
 * No backend at all, whatever the environment and the kernel offer: the
 * registry only, for a profiler that attaches later (since 0.2; backends
 * must be 0).
 */
#define PERFINJECT_F_REGISTRY_ONLY	(1U << 2)
/*
 * Keep this handle's code out of the registry: a profiler that attaches
 * later does not see it (perfinject__rundown() can still describe it
 * again). For a runtime that only writes files, or profiles from the
 * start, and wants no cost beyond its backends' (since 0.2; not with
 * PERFINJECT_F_REGISTRY_ONLY).
 */
#define PERFINJECT_F_NO_REGISTRY	(1U << 3)
/*
 * Keep each live load's line table and unwind information in the
 * registry too, in the kernel's formats, so that a profiler that
 * attaches later gets them with the names (since 0.2; not with
 * PERFINJECT_F_NO_REGISTRY). They take their memory for as long as the
 * code is live, as the names do.
 */
#define PERFINJECT_F_REGISTRY_DATA	(1U << 4)

/*
 * Options of perfinject__new(). Declare with PERFINJECT_OPTS() so that
 * sz is set and every field not named is zero: a program built against
 * an older header passes a smaller sz, and the library treats the fields
 * it did not know as zero; a larger sz is accepted only if the bytes the
 * library does not know are zero.
 */
struct perfinject_opts {
	size_t sz; /* sizeof(struct perfinject_opts) */
	/*
	 * PERFINJECT_BACKEND_* to use; 0 picks the default: the
	 * PERFINJECT_BACKENDS environment variable if set, else the kernel
	 * backend if the kernel has PR_PERF_JIT_CODE, else none.
	 */
	unsigned int backends;
	unsigned int flags; /* PERFINJECT_F_* */
	/* Directory of the perf-map and jitdump files; NULL is "/tmp". */
	const char *dir;
	size_t :0;
};
#define perfinject_opts__last_field dir

#define PERFINJECT_OPTS(NAME, ...)					\
	struct perfinject_opts NAME = ({				\
		memset(&NAME, 0, sizeof(struct perfinject_opts));	\
		(struct perfinject_opts){				\
			.sz = sizeof(struct perfinject_opts),		\
			__VA_ARGS__					\
		};							\
	})

struct perfinject;

/*
 * Create a handle. @opts may be NULL for the defaults. Returns NULL and
 * sets errno on failure: EINVAL (opts->sz smaller than the first
 * published struct, non-zero bytes past the fields this library knows,
 * unknown flags or backends, empty dir),
 * EOPNOTSUPP (PERFINJECT_F_STRICT and a requested backend is not
 * available), EEXIST/EPERM (PERFINJECT_F_STRICT and a file backend found
 * a file it must not overwrite), ENOMEM.
 */
PERFINJECT_API struct perfinject *
perfinject__new(const struct perfinject_opts *opts);

/*
 * The process's shared handle, for components of one process that share
 * one (two JITs, a runtime and its extensions, as CPython's
 * PyUnstable_WritePerfMapEntry() serves): made with the default options
 * (perfinject__new(NULL)) on the first call; each call takes a reference
 * that perfinject__free() gives back, and the last one frees it. NULL
 * with errno set if it cannot be made. Since 0.2.
 */
PERFINJECT_API struct perfinject *perfinject__default(void);

/*
 * Unload everything still live (the kernel backend gets the unloads),
 * close the files (the last writer of the jitdump adds JIT_CODE_CLOSE)
 * and free the handle. NULL is ignored. No other
 * call on @pi may run at the same time or later. For the handle of
 * perfinject__default(), this gives back one reference: the handle goes
 * with the last, and only that one must not race with other calls.
 */
PERFINJECT_API void perfinject__free(struct perfinject *pi);

/* The PERFINJECT_BACKEND_* bits that are active. */
PERFINJECT_API unsigned int perfinject__backends(const struct perfinject *pi);

/*
 * [@addr, @addr + @len) now holds the code called @name (NUL-terminated,
 * 1 to PERFINJECT_NAME_MAX - 1 characters). @code_index identifies this
 * piece of code (a compilation id, not a function id); 0 means none. A
 * non-zero @code_index must not be used by another live entry. With the
 * jitdump backend active the code bytes are written from @addr to the
 * file (zeros, and a warning, if the range cannot be read).
 *
 * Returns 0, or -EINVAL (NULL @pi or @name, empty @name, @len 0, range
 * wraps), -ENAMETOOLONG, -EEXIST (code already starts at @addr, or
 * @code_index is live), -E2BIG (jitdump active and the record would not
 * fit its format), -ENOMEM, or the kernel's error.
 */
#define PERFINJECT_NAME_MAX	4096	/* bytes of a name with its NUL */
PERFINJECT_API int perfinject__load(struct perfinject *pi, const char *name,
				    uint64_t addr, uint64_t len,
				    uint64_t code_index);

/* The code starting at @addr is gone. -ENOENT if none starts there. */
PERFINJECT_API int perfinject__unload(struct perfinject *pi, uint64_t addr);

/* The code with @code_index is gone. -EINVAL for 0, -ENOENT if none. */
PERFINJECT_API int perfinject__unload_index(struct perfinject *pi,
					    uint64_t code_index);

/*
 * The code starting at @old_addr now starts at @new_addr (same length,
 * name and index). -ENOENT if no code starts at @old_addr, -EEXIST if
 * code already starts at @new_addr, -EINVAL if the addresses are equal
 * or the new range wraps.
 */
PERFINJECT_API int perfinject__move(struct perfinject *pi, uint64_t old_addr,
				    uint64_t new_addr);

/* What a piece of code is, where the runtime knows (perfinject_load_opts). */
enum perfinject_kind {
	PERFINJECT_KIND_UNKNOWN		= 0,
	PERFINJECT_KIND_FUNCTION	= 1, /* a compiled function or method */
	PERFINJECT_KIND_INTERPRETER	= 2, /* the interpreter's own code */
	PERFINJECT_KIND_STUB		= 3, /* stubs, adapters, trampolines */
	PERFINJECT_KIND_REGEXP		= 4, /* a compiled regular expression */
	PERFINJECT_KIND_WASM		= 5, /* a compiled WebAssembly function */
};

/*
 * One level of a source position: the code at an address comes from
 * @file:@line of @function. A line table row lists them innermost first;
 * the last is the outermost, the loaded code's own function (@function
 * may be NULL there).
 */
struct perfinject_frame {
	const char *file;	/* NUL-terminated; required */
	const char *function;	/* inlined function, NUL-terminated */
	uint32_t line;		/* from 1; 0: unknown */
	uint32_t column;	/* from 1; 0: unknown */
};

/*
 * One row of a line table: from @addr to the next row's addr (or the end
 * of the code), the code comes from @frames. Rows are sorted by addr and
 * lie within the code.
 */
struct perfinject_line {
	uint64_t addr;
	const struct perfinject_frame *frames;	/* innermost first */
	uint32_t nr_frames;			/* 1 or more */
	uint32_t discrim;			/* DWARF discriminator, or 0 */
};

/*
 * Options of perfinject__load_opts() and of a PERFINJECT_OP_LOAD in a
 * batch. Declare with PERFINJECT_LOAD_OPTS(); the rules of
 * struct perfinject_opts apply (sz, zero tail). Every pointer needs to
 * stay valid only during the call.
 */
struct perfinject_load_opts {
	size_t sz;		/* sizeof(struct perfinject_load_opts) */
	/* 0: the name is NUL-terminated; else its length (no NUL needed). */
	size_t name_len;
	uint32_t kind;		/* enum perfinject_kind */
	uint32_t tier;		/* the runtime's own tier number; 0: none */
	/* A line table: nr_lines rows of line_sz bytes each. */
	const struct perfinject_line *lines;
	size_t nr_lines;
	size_t line_sz;		/* sizeof(struct perfinject_line) */
	size_t frame_sz;	/* sizeof(struct perfinject_frame) */
	/*
	 * Unwind information for the code, as jitdump's
	 * JIT_CODE_UNWINDING_INFO carries it: .eh_frame and .eh_frame_hdr
	 * laid out for an ELF file with the code at its text offset
	 * (tools/perf/Documentation/jitdump-specification.txt).
	 */
	const void *eh_frame;
	size_t eh_frame_sz;
	const void *eh_frame_hdr;
	size_t eh_frame_hdr_sz;
	size_t :0;
};
#define perfinject_load_opts__last_field eh_frame_hdr_sz

#define PERFINJECT_LOAD_OPTS(NAME, ...)					\
	struct perfinject_load_opts NAME = ({				\
		memset(&NAME, 0, sizeof(struct perfinject_load_opts));	\
		(struct perfinject_load_opts){				\
			.sz = sizeof(struct perfinject_load_opts),	\
			.line_sz = sizeof(struct perfinject_line),	\
			.frame_sz = sizeof(struct perfinject_frame),	\
			__VA_ARGS__					\
		};							\
	})

/*
 * perfinject__load() with options: a name given by pointer and length,
 * the code's kind and tier, a line table (with inlined frames) and unwind
 * information. The file backends write what their formats hold: the
 * jitdump gets JIT_CODE_DEBUG_INFO (the innermost frame of each row) and
 * JIT_CODE_UNWINDING_INFO before the JIT_CODE_LOAD, in one write. The
 * kernel backend sends both, with every inlined frame, after the LOAD
 * in the same call, where the kernel takes PERF_JIT_CODE_DATA. @opts
 * may be NULL. Errors as perfinject__load(), and -EINVAL for options
 * that do not check out (sz, a non-zero tail, rows out of order or
 * outside the code, a row without frames or file, unwind sizes).
 */
PERFINJECT_API int
perfinject__load_opts(struct perfinject *pi, const char *name, uint64_t addr,
		      uint64_t len, uint64_t code_index,
		      const struct perfinject_load_opts *opts);

/*
 * Everything that starts in [@addr, @addr + @len) is gone: a module, an
 * object or a code space freed at once. Returns the number of entries
 * unloaded (0 when none), or a negative errno.
 */
PERFINJECT_API int perfinject__unload_range(struct perfinject *pi,
					    uint64_t addr, uint64_t len);

enum perfinject_op {
	PERFINJECT_OP_LOAD		= 1, /* addr, len, code_index, name */
	PERFINJECT_OP_UNLOAD		= 2, /* addr */
	PERFINJECT_OP_MOVE		= 3, /* addr, new_addr */
	PERFINJECT_OP_UNLOAD_INDEX	= 4, /* code_index */
};

/*
 * One operation of perfinject__batch(); unused fields must be zero.
 * Programs built against libperfinject 0.1 pass the struct without
 * @opts, and keep working: perfinject__batch is a versioned symbol.
 */
struct perfinject_code_op {
	uint32_t op;	/* enum perfinject_op */
	uint32_t flags;	/* must be zero */
	uint64_t addr;
	uint64_t len;
	uint64_t new_addr;
	uint64_t code_index;
	const char *name;
	const struct perfinject_load_opts *opts; /* LOAD only; may be NULL */
};

/*
 * Apply @n operations in order, as the single calls would. The kernel
 * backend sends them in calls of up to 1024 entries. Like write(2):
 * returns @n when all were applied, a smaller count when the operation
 * at that position failed (call again from there to get its error), or a
 * negative errno when the first one failed. -E2BIG if @n > INT_MAX.
 */
PERFINJECT_API int perfinject__batch(struct perfinject *pi,
				     const struct perfinject_code_op *ops,
				     size_t n);

/*
 * Turn @backends (PERFINJECT_BACKEND_*) on in a live handle, as a runtime
 * that is asked at run time to start writing a perf map does, and
 * describe the code live now to the backends that were off (only to
 * them). Backends already on stay as they are. Returns 0, -EINVAL,
 * -EOPNOTSUPP (the kernel backend on a kernel without PR_PERF_JIT_CODE),
 * or the error of opening a file; the others asked for are on even then
 * (perfinject__backends() tells). Since 0.2.
 */
PERFINJECT_API int perfinject__enable(struct perfinject *pi,
				      unsigned int backends);

/*
 * Turn @backends off: their files are closed (the jitdump ends with its
 * JIT_CODE_CLOSE record if no other writer has it open); the registry
 * and the other backends go on. Returns 0 or -EINVAL. Since 0.2.
 */
PERFINJECT_API int perfinject__disable(struct perfinject *pi,
				       unsigned int backends);

/*
 * Emit a load for every live entry again, to every active backend: for a
 * profiler that started late. With PERFINJECT_F_REGISTRY_DATA, the kernel
 * backend sends each load's line table and unwind information after it,
 * as the load did. Records sent through PR_PERF_JIT_CODE are
 * not marked PERF_JIT_CODE_FLAGS_SYNTHESIZED (only a profiler's ioctl
 * replay is). Returns the number of entries emitted or a negative errno.
 */
PERFINJECT_API int perfinject__rundown(struct perfinject *pi);

/* A live entry, as perfinject__find() and the registry reader see it. */
struct perfinject_code {
	uint64_t addr;
	uint64_t len;
	uint64_t code_index;
	const char *name;
};

/*
 * Look up the live entry starting at @addr. The name
 * is copied, truncated, into @name_buf (@code->name points to it) when
 * @name_buf is given, else @code->name is NULL. -ENOENT if none.
 */
PERFINJECT_API int perfinject__find(struct perfinject *pi, uint64_t addr,
				    struct perfinject_code *code,
				    char *name_buf, size_t name_sz);

/*
 * What perfinject__find_info() tells of a live entry. Set sz to
 * sizeof(struct perfinject_code_info): the library fills the fields it
 * knows within sz and leaves the rest as they are, so the struct can
 * grow. Since 0.2.
 */
struct perfinject_code_info {
	size_t sz;
	uint64_t addr;
	uint64_t len;
	uint64_t code_index;
	uint32_t kind;		/* enum perfinject_kind */
	uint32_t tier;
	uint32_t name_len;	/* of the whole name, without the NUL */
	uint32_t __reserved;
};

/*
 * perfinject__find() with the kind, the tier and the name's length: look
 * up the live entry starting at @addr; copy its name, truncated and
 * NUL-terminated, into @name_buf when it is given. -ENOENT if none,
 * -EINVAL if @info->sz is smaller than the first published struct.
 * Since 0.2.
 */
PERFINJECT_API int perfinject__find_info(struct perfinject *pi, uint64_t addr,
					 struct perfinject_code_info *info,
					 char *name_buf, size_t name_sz);

/* Number of live entries. */
PERFINJECT_API size_t perfinject__count(struct perfinject *pi);

/*
 * The registry descriptor, as other processes read it. The exported
 * symbol perfinject_registry_descriptor is this structure; see
 * doc/registry.md for the read protocol.
 */
#define PERFINJECT_REGISTRY_MAGIC	0x4a495452	/* "JITR" */
#define PERFINJECT_REGISTRY_VERSION	2

/*
 * One entry of the published view. seq is odd while the entry changes
 * and grows by 2 with every change; a reader uses an entry only if it
 * read the same even seq, and the same bytes, before and after the name.
 */
struct perfinject_registry_entry {
	uint64_t seq;
	uint64_t addr;
	uint64_t len;
	uint64_t code_index;
	uint64_t name;		/* address of the name; 0: free slot */
	uint32_t name_len;	/* without the NUL */
	uint32_t kind;		/* enum perfinject_kind */
	uint32_t tier;
	/* Since 0.2, where entry_size is 64 or more; else absent. */
	uint32_t data_size;	/* bytes at data; 0: none */
	uint64_t data;		/* address of the entry's data */
};

/*
 * The data of an entry (PERFINJECT_F_REGISTRY_DATA): data_size bytes
 * of payloads, each this header and then size bytes that the kernel
 * takes as a PERF_JIT_CODE_DATA entry of that type (struct
 * perf_jit_code_lines, struct perf_jit_code_unwind), padded to a
 * multiple of 8. Like the name, the data of a live entry never changes.
 */
struct perfinject_registry_data {
	uint32_t type;		/* enum perf_jit_code_data_type */
	uint32_t size;		/* of the payload, without its padding */
};
/* Where the first published entry ended: a reader takes this or more. */
#define PERFINJECT_REGISTRY_ENTRY_SIZE_V2	56

struct perfinject_registry_descriptor {
	uint32_t magic;		/* PERFINJECT_REGISTRY_MAGIC */
	uint32_t version;	/* PERFINJECT_REGISTRY_VERSION */
	uint32_t descriptor_size;
	uint32_t entry_size;
	uint64_t seq;		/* odd while the chunk table changes */
	uint64_t chunks;	/* address of nr_chunks chunk addresses */
	uint64_t nr_chunks;
	uint64_t chunk_slots;	/* entries per chunk */
	uint64_t nr_live;
	uint64_t changes;	/* write sections so far */
};

/* Address of this process's descriptor. */
PERFINJECT_API const struct perfinject_registry_descriptor *
perfinject_registry__descriptor(void);

/*
 * Find the descriptor in process @pid by its symbol: the address goes to
 * @addr. -ENOENT if no object mapped there exports it. With several
 * copies of the library in the process, the first in map order.
 */
PERFINJECT_API int perfinject_registry__find_pid(pid_t pid, uint64_t *addr);

/*
 * Find the descriptor of every copy of the library in process @pid (a
 * runtime that embeds another, a plugin with a copy of its own): up to
 * @max addresses (at most 16) go to @addrs, each once, in map order.
 * Returns their number, or -ENOENT as perfinject_registry__find_pid().
 * Since 0.2.
 */
PERFINJECT_API int perfinject_registry__find_all_pid(pid_t pid,
						     uint64_t *addrs,
						     size_t max);

/* Return non-zero to stop the walk. */
typedef int (*perfinject_registry_cb)(const struct perfinject_code *code,
				      void *ctx);

/*
 * Read a snapshot of the registry of process @pid, whose
 * descriptor is at @desc_addr (0: every registry in the process, as
 * perfinject_registry__find_all_pid() finds them, one after the other),
 * with process_vm_readv(2), and call @cb for each entry. Returns the
 * number of entries in the snapshot (the sum over the registries read;
 * one that cannot be read is skipped if another can), or
 * -EAGAIN when no consistent snapshot could be read within 2 seconds,
 * -EFBIG when it is larger than a reader reads of a process (64 MiB of
 * entries, 256 MiB of names), -EPROTO for a bad magic, version or entry
 * size, or the errno of the reads. Sizes read from the process are
 * never trusted.
 */
PERFINJECT_API int perfinject_registry__read_pid(pid_t pid, uint64_t desc_addr,
						 perfinject_registry_cb cb,
						 void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* __PERFINJECT_PERFINJECT_H */
