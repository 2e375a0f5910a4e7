// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Handles, options, backend selection, and the engine every operation
 * goes through: resolve a chunk of operations against the registry,
 * hand it to the kernel, then commit it to the registry and the files.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define PI_CHUNK	PERF_JIT_CODE_MAX_ENTRIES
#define PI_KNOWN_FLAGS	(PERFINJECT_F_STRICT | PERFINJECT_F_NO_ENV | \
			 PERFINJECT_F_REGISTRY_ONLY | PERFINJECT_F_NO_REGISTRY | \
			 PERFINJECT_F_REGISTRY_DATA)

#ifndef offsetofend
#define offsetofend(type, member) \
	(offsetof(type, member) + sizeof(((type *)0)->member))
#endif

/* The first published struct perfinject_opts ends after dir. */
#define PI_OPTS_SIZE_VER0 offsetofend(struct perfinject_opts, dir)

PERFINJECT_API int perfinject_version_major(void)
{
	return PERFINJECT_MAJOR_VERSION;
}

PERFINJECT_API int perfinject_version_minor(void)
{
	return PERFINJECT_MINOR_VERSION;
}

PERFINJECT_API bool perfinject_check_version(int major, int minor)
{
	return PERFINJECT_MAJOR_VERSION > major ||
	       (PERFINJECT_MAJOR_VERSION == major &&
		PERFINJECT_MINOR_VERSION >= minor);
}

static int pi_print_default(enum perfinject_print_level level,
			    const char *fmt, va_list ap)
{
	if (level != PERFINJECT_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static perfinject_print_fn_t pi_print = pi_print_default;

PERFINJECT_API perfinject_print_fn_t
perfinject_set_print(perfinject_print_fn_t fn)
{
	return __atomic_exchange_n(&pi_print, fn, __ATOMIC_ACQ_REL);
}

void pi_log(enum perfinject_print_level level, const char *fmt, ...)
{
	perfinject_print_fn_t fn = __atomic_load_n(&pi_print, __ATOMIC_ACQUIRE);
	char buf[512];
	va_list ap;
	int saved = errno;

	if (!fn)
		return;
	/* One call per message: prefix it here, not in each caller. */
	va_start(ap, fmt);
	if (snprintf(buf, sizeof(buf), "libperfinject: %s", fmt) <
	    (int)sizeof(buf))
		fmt = buf;
	fn(level, fmt, ap);
	va_end(ap);
	errno = saved;
}

/* All handles, so that fork() can take their locks. */
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;

/* perfinject__default(): the shared handle, and every handle's refs. */
static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static struct perfinject *pi_default;
static struct perfinject *handles;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

unsigned long pi_fork_gen;

/*
 * Hold every lock the library has across fork(), so that the child gets
 * them in a known state. Nothing here waits for anything but those locks:
 * the library has no threads of its own.
 */
static void pi_atfork_prepare(void)
{
	struct perfinject *pi;

	pthread_mutex_lock(&handles_lock);
	for (pi = handles; pi; pi = pi->next)
		pthread_mutex_lock(&pi->lock);
	pi_publish_lock();
	/* Last: a writer may wait for a grace period under pi->lock. */
	pi_addr_before_fork();
}

static void pi_atfork_unlock(void)
{
	struct perfinject *pi;

	pi_publish_unlock();
	for (pi = handles; pi; pi = pi->next)
		pthread_mutex_unlock(&pi->lock);
	pthread_mutex_unlock(&handles_lock);
}

static void pi_atfork_parent(void)
{
	pi_addr_after_fork_parent();
	pi_atfork_unlock();
}

static void pi_atfork_child(void)
{
	/* Single-threaded here: the next call of each handle sees it. */
	pi_fork_gen++;
	pi_addr_after_fork_child();
	pi_atfork_unlock();
}

static void pi_atfork_register(void)
{
	pthread_atfork(pi_atfork_prepare, pi_atfork_parent, pi_atfork_child);
}

/* The caller's thread id, cached per thread until the next fork(). */
pid_t pi_gettid(void)
{
	static __thread unsigned long gen;
	static __thread pid_t tid;

	if (!tid || gen != __atomic_load_n(&pi_fork_gen, __ATOMIC_RELAXED)) {
		tid = syscall(SYS_gettid);
		gen = pi_fork_gen;
	}
	return tid;
}

static bool pi_mem_zeroed(const char *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

static int pi_opts_valid(const struct perfinject_opts *opts)
{
	if (!opts)
		return 0;
	if (opts->sz < PI_OPTS_SIZE_VER0)
		return -EINVAL;
	/* Bytes past what this library knows must be zero (libbpf rule). */
	if (opts->sz > sizeof(*opts) &&
	    !pi_mem_zeroed((const char *)opts + sizeof(*opts),
			   opts->sz - sizeof(*opts)))
		return -EINVAL;
	if (opts->flags & ~PI_KNOWN_FLAGS)
		return -EINVAL;
	if (opts->backends & ~PERFINJECT_BACKEND_ALL)
		return -EINVAL;
	if ((opts->flags & PERFINJECT_F_REGISTRY_ONLY) &&
	    (opts->backends || (opts->flags & PERFINJECT_F_NO_REGISTRY)))
		return -EINVAL;
	if ((opts->flags & PERFINJECT_F_REGISTRY_DATA) &&
	    (opts->flags & PERFINJECT_F_NO_REGISTRY))
		return -EINVAL;
	if (opts->dir && !opts->dir[0])
		return -EINVAL;
	return 0;
}

/*
 * PERFINJECT_BACKENDS=kernel,perfmap,jitdump (or all, or none). Unknown
 * names are ignored: a typo in the environment must not stop a runtime.
 * Returns -1 when the variable is not set.
 */
static int pi_env_backends(void)
{
	static const struct {
		const char	*name;
		unsigned int	bits;
	} names[] = {
		{ "kernel",	PERFINJECT_BACKEND_KERNEL },
		{ "perfmap",	PERFINJECT_BACKEND_PERFMAP },
		{ "jitdump",	PERFINJECT_BACKEND_JITDUMP },
		{ "all",	PERFINJECT_BACKEND_ALL },
		{ "none",	0 },
	};
	const char *env = secure_getenv("PERFINJECT_BACKENDS");
	unsigned int bits = 0;
	size_t len, i;

	if (!env)
		return -1;
	while (*env) {
		len = strcspn(env, ", ");
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == len &&
			    !strncmp(env, names[i].name, len))
				bits |= names[i].bits;
		env += len;
		env += strspn(env, ", ");
	}
	return bits;
}

static int pi_open_files(struct perfinject *pi, unsigned int want, bool strict)
{
	int err;

	if (want & PERFINJECT_BACKEND_PERFMAP) {
		err = pi_perfmap_open(pi);
		if (!err)
			__atomic_or_fetch(&pi->backends,
					  PERFINJECT_BACKEND_PERFMAP,
					  __ATOMIC_RELAXED);
		else if (strict)
			return err;
		else
			pi_warn("perf-map backend off: %s/perf-%d.map: %s\n",
				pi->dir, (int)pi->pid, strerror(-err));
	}
	if (want & PERFINJECT_BACKEND_JITDUMP) {
		err = pi_jitdump_open(pi);
		if (!err)
			__atomic_or_fetch(&pi->backends,
					  PERFINJECT_BACKEND_JITDUMP,
					  __ATOMIC_RELAXED);
		else if (strict)
			return err;
		else
			pi_warn("jitdump backend off: %s/jit-%d.dump: %s\n",
				pi->dir, (int)pi->pid, strerror(-err));
	}
	return 0;
}

static void pi_check_fork(struct perfinject *pi);

/*
 * The code_index of a jitdump record. perf inject names a file after it
 * (jitted-PID-N.so), and every handle and every copy of the library in
 * the process writes into the same jitdump, so it must be unique in the
 * process, whatever the callers' own indices are (two JITs both count
 * compilations from 1): the page of a variable of this copy of the
 * library (copies are mapped apart) above a counter of 40 bits.
 */
static uint64_t pi_dump_serial;

/* Counters a handle takes at a time: one atomic add per that many loads. */
#define PI_DUMP_BLOCK	1024

static uint64_t pi_dump_index(struct perfinject *pi)
{
	uint64_t copy = ((uintptr_t)&pi_dump_serial >> 12) & 0x7fffff;

	if (pi->dump_next == pi->dump_end) {
		pi->dump_end = __atomic_add_fetch(&pi_dump_serial,
						  PI_DUMP_BLOCK,
						  __ATOMIC_RELAXED);
		pi->dump_next = pi->dump_end - PI_DUMP_BLOCK;
	}
	return (1ULL << 63) | copy << 40 |
	       (++pi->dump_next & ((1ULL << 40) - 1));
}
static void pi_unload_all(struct perfinject *pi);

PERFINJECT_API struct perfinject *
perfinject__new(const struct perfinject_opts *opts)
{
	unsigned int want, flags = opts ? opts->flags : 0;
	bool strict = flags & PERFINJECT_F_STRICT;
	struct perfinject *pi;
	int env, err;

	err = pi_opts_valid(opts);
	if (err)
		goto err_out;

	want = opts ? opts->backends : 0;
	if (!want && !(flags & PERFINJECT_F_REGISTRY_ONLY)) {
		env = flags & PERFINJECT_F_NO_ENV ? -1 : pi_env_backends();
		if (env >= 0)
			want = env;
		else if (!pi_kernel_probe())
			want = PERFINJECT_BACKEND_KERNEL;
	}

	pthread_once(&atfork_once, pi_atfork_register);

	err = -ENOMEM;
	pi = calloc(1, sizeof(*pi));
	if (!pi)
		goto err_out;
	pthread_mutex_init(&pi->lock, NULL);
	pi->refs = 1;
	pi->perfmap.fd = -1;
	pi->jitdump.fd = -1;
	pi->publish = !(flags & PERFINJECT_F_NO_REGISTRY);
	pi->keep_data = flags & PERFINJECT_F_REGISTRY_DATA;
	pi->pid = getpid();
	pi->fork_gen = __atomic_load_n(&pi_fork_gen, __ATOMIC_RELAXED);
	pi->dir = strdup(opts && opts->dir ? opts->dir : "/tmp");
	pi->changes = calloc(PI_CHUNK, sizeof(*pi->changes));
	pi->kentries = calloc(PI_CHUNK, sizeof(*pi->kentries));
	pi->chunk_addr = calloc(PI_CHUNK_HASH, sizeof(*pi->chunk_addr));
	pi->chunk_index = calloc(PI_CHUNK_HASH, sizeof(*pi->chunk_index));
	pi->own = calloc(PI_OWN_SLOTS, sizeof(*pi->own));
	if (!pi->dir || !pi->changes || !pi->kentries || !pi->chunk_addr ||
	    !pi->chunk_index || !pi->own)
		goto err_free;
	err = pi_registry_init(pi);
	if (err)
		goto err_free;

	if (want & PERFINJECT_BACKEND_KERNEL) {
		if (!pi_kernel_probe())
			pi->backends |= PERFINJECT_BACKEND_KERNEL;
		else if (strict) {
			err = -EOPNOTSUPP;
			goto err_registry;
		} else {
			pi_warn("kernel backend off: the kernel has no PR_PERF_JIT_CODE\n");
		}
	}
	err = pi_open_files(pi, want, strict);
	if (err)
		goto err_files;

	pthread_mutex_lock(&handles_lock);
	pi->next = handles;
	handles = pi;
	pthread_mutex_unlock(&handles_lock);
	return pi;

err_files:
	pi_files_close(pi, false);
err_registry:
	pi_registry_fini(pi);
err_free:
	free(pi->chunk_index);
	free(pi->chunk_addr);
	free(pi->kentries);
	free(pi->changes);
	free(pi->own);
	free(pi->dir);
	pthread_mutex_destroy(&pi->lock);
	free(pi);
err_out:
	errno = -err;
	return NULL;
}

PERFINJECT_API struct perfinject *perfinject__default(void)
{
	struct perfinject *pi;

	pthread_mutex_lock(&default_lock);
	if (pi_default)
		pi_default->refs++;
	else
		pi_default = perfinject__new(NULL);
	pi = pi_default;
	pthread_mutex_unlock(&default_lock);
	return pi;
}

PERFINJECT_API void perfinject__free(struct perfinject *pi)
{
	struct perfinject **pp;

	if (!pi)
		return;
	/* The shared handle goes with its last reference. */
	pthread_mutex_lock(&default_lock);
	if (--pi->refs) {
		pthread_mutex_unlock(&default_lock);
		return;
	}
	if (pi == pi_default)
		pi_default = NULL;
	pthread_mutex_unlock(&default_lock);

	pthread_mutex_lock(&handles_lock);
	for (pp = &handles; *pp; pp = &(*pp)->next) {
		if (*pp == pi) {
			*pp = pi->next;
			break;
		}
	}
	pthread_mutex_unlock(&handles_lock);

	pthread_mutex_lock(&pi->lock);
	if (pi->fork_gen != __atomic_load_n(&pi_fork_gen, __ATOMIC_RELAXED)) {
		/* A child: the files it holds are its parent's. */
		pi_files_close(pi, false);
		pi->fork_gen = pi_fork_gen;
	}
	pi_unload_all(pi);
	pi_files_close(pi, true);
	pi_registry_fini(pi);
	pthread_mutex_unlock(&pi->lock);

	free(pi->out.data);
	free(pi->info.data);
	free(pi->chunk_index);
	free(pi->chunk_addr);
	free(pi->kentries);
	free(pi->changes);
	free(pi->own);
	free(pi->dir);
	pthread_mutex_destroy(&pi->lock);
	free(pi);
}

PERFINJECT_API unsigned int perfinject__backends(const struct perfinject *pi)
{
	if (!pi) {
		errno = EINVAL;
		return 0;
	}
	return __atomic_load_n(&pi->backends, __ATOMIC_RELAXED);
}

/* An entry as a chunk sees it: the registry plus the chunk's changes. */
struct pi_view {
	uint64_t	addr;
	uint64_t	len;
	uint64_t	code_index;
	uint64_t	dump_index;
	const char	*name;
	uint32_t	name_len;
	uint32_t	kind;
	uint32_t	tier;
	uint32_t	data_size;
	const void	*data;
};

static void pi_view_of_change(const struct pi_change *c, uint64_t addr,
			      struct pi_view *v)
{
	v->addr = addr;
	v->len = c->kentry.len;
	v->code_index = c->kentry.code_index;
	v->dump_index = c->dump_index;
	v->name = c->name;
	v->name_len = c->name_len;
	v->kind = c->add ? c->add->kind : 0;
	v->tier = c->add ? c->add->tier : 0;
	v->data_size = c->add ? c->add->data_size : 0;
	v->data = c->add ? c->add->data : NULL;
}

static void pi_view_of_entry(const struct pi_entry *e, struct pi_view *v)
{
	v->addr = e->addr;
	v->len = e->len;
	v->code_index = e->code_index;
	v->dump_index = e->dump_index;
	v->name = e->name;
	v->name_len = e->name_len;
	v->kind = e->kind;
	v->tier = e->tier;
	v->data_size = e->data_size;
	v->data = e->data;
}

/* The newest change of the chunk about @key, or NULL. */
static const struct pi_change *pi_chunk_get(struct perfinject *pi,
					    struct pi_chunk_slot *tab,
					    uint64_t key)
{
	size_t i = pi_hash(key) & (PI_CHUNK_HASH - 1);

	for (; tab[i].gen == pi->chunk_gen; i = (i + 1) & (PI_CHUNK_HASH - 1))
		if (tab[i].key == key)
			return &pi->changes[tab[i].change];
	return NULL;
}

static void pi_chunk_set(struct perfinject *pi, struct pi_chunk_slot *tab,
			 uint64_t key, unsigned int change)
{
	size_t i = pi_hash(key) & (PI_CHUNK_HASH - 1);

	for (; tab[i].gen == pi->chunk_gen; i = (i + 1) & (PI_CHUNK_HASH - 1))
		if (tab[i].key == key)
			break;
	tab[i].gen = pi->chunk_gen;
	tab[i].key = key;
	tab[i].change = change;
}

/* A new chunk: forget the last one's keys without clearing the tables. */
static void pi_chunk_begin(struct perfinject *pi)
{
	if (++pi->chunk_gen == 0) {
		memset(pi->chunk_addr, 0,
		       PI_CHUNK_HASH * sizeof(*pi->chunk_addr));
		memset(pi->chunk_index, 0,
		       PI_CHUNK_HASH * sizeof(*pi->chunk_index));
		pi->chunk_gen = 1;
	}
}

/* Change @nr of the chunk is resolved: it decides about its keys now. */
static void pi_chunk_note(struct perfinject *pi, unsigned int nr)
{
	const struct perf_jit_code_entry *k = &pi->changes[nr].kentry;

	pi_chunk_set(pi, pi->chunk_addr, k->addr, nr);
	if (k->op == PERF_JIT_CODE_MOVE)
		pi_chunk_set(pi, pi->chunk_addr, k->new_addr, nr);
	if (k->code_index)
		pi_chunk_set(pi, pi->chunk_index, k->code_index, nr);
}

/*
 * The newest change of this chunk about the key decides; without one,
 * the registry does.
 */
static bool pi_find_addr(struct perfinject *pi, unsigned int nr,
			 uint64_t addr, struct pi_view *v)
{
	const struct pi_change *c = nr ? pi_chunk_get(pi, pi->chunk_addr,
						      addr) : NULL;
	struct pi_entry *e;

	if (c) {
		switch (c->kentry.op) {
		case PERF_JIT_CODE_LOAD:
			pi_view_of_change(c, addr, v);
			return true;
		case PERF_JIT_CODE_MOVE:
			if (c->kentry.new_addr == addr) {
				pi_view_of_change(c, addr, v);
				return true;
			}
			return false;
		default:
			return false;
		}
	}
	e = pi_lookup_addr(pi, addr);
	if (!e)
		return false;
	pi_view_of_entry(e, v);
	return true;
}

static bool pi_find_index(struct perfinject *pi, unsigned int nr,
			  uint64_t code_index, struct pi_view *v)
{
	const struct pi_change *c = nr ? pi_chunk_get(pi, pi->chunk_index,
						      code_index) : NULL;
	struct pi_entry *e;

	if (c) {
		switch (c->kentry.op) {
		case PERF_JIT_CODE_LOAD:
			pi_view_of_change(c, c->kentry.addr, v);
			return true;
		case PERF_JIT_CODE_MOVE:
			pi_view_of_change(c, c->kentry.new_addr, v);
			return true;
		default:
			return false;
		}
	}
	e = pi_lookup_index(pi, code_index);
	if (!e)
		return false;
	pi_view_of_entry(e, v);
	return true;
}

/* The first published struct perfinject_load_opts, and its arrays. */
#define PI_LOAD_OPTS_SIZE_VER0 \
	offsetofend(struct perfinject_load_opts, eh_frame_hdr_sz)
#define PI_LINE_SIZE_VER0	offsetofend(struct perfinject_line, discrim)
#define PI_FRAME_SIZE_VER0	offsetofend(struct perfinject_frame, column)

/* @sz bytes at @p, of which this library knows @known: the rest is zero. */
static bool pi_tail_zero(const void *p, size_t sz, size_t known)
{
	return sz <= known || pi_mem_zeroed((const char *)p + known,
					    sz - known);
}

/*
 * Copy the options a caller passed, of whatever size it was built with,
 * into @o, and check them against the code at [@addr, @addr + @len).
 */
const struct perfinject_load_opts pi_no_opts;

/* Check @opts into *@o; *@lo: @o, or pi_no_opts when there are none. */
static int pi_load_opts_get(const struct perfinject_load_opts *opts,
			    uint64_t addr, uint64_t len,
			    struct perfinject_load_opts *o,
			    const struct perfinject_load_opts **lo)
{
	const char *row;
	uint64_t prev = addr;
	size_t i, j;

	*lo = &pi_no_opts;
	if (!opts)
		return 0;
	*lo = o;
	memset(o, 0, sizeof(*o));
	if (opts->sz < PI_LOAD_OPTS_SIZE_VER0 ||
	    !pi_tail_zero(opts, opts->sz, sizeof(*o)))
		return -EINVAL;
	memcpy(o, opts, opts->sz < sizeof(*o) ? opts->sz : sizeof(*o));
	if (o->kind > PERFINJECT_KIND_WASM)
		return -EINVAL;
	if (o->nr_lines) {
		if (!o->lines || o->line_sz < PI_LINE_SIZE_VER0 ||
		    o->frame_sz < PI_FRAME_SIZE_VER0 ||
		    o->nr_lines > UINT32_MAX)
			return -EINVAL;
		for (i = 0, row = (const char *)o->lines; i < o->nr_lines;
		     i++, row += o->line_sz) {
			const struct perfinject_line *l = (const void *)row;
			const char *f = (const char *)l->frames;

			if (!pi_tail_zero(row, o->line_sz, sizeof(*l)) ||
			    l->addr < prev || l->addr - addr >= len ||
			    !l->nr_frames || !l->frames)
				return -EINVAL;
			prev = l->addr;
			for (j = 0; j < l->nr_frames; j++, f += o->frame_sz) {
				const struct perfinject_frame *fr =
					(const void *)f;

				if (!pi_tail_zero(f, o->frame_sz,
						  sizeof(*fr)) ||
				    !fr->file ||
				    strnlen(fr->file, PATH_MAX) == PATH_MAX)
					return -EINVAL;
			}
		}
	}
	if (!o->eh_frame != !o->eh_frame_sz ||
	    !o->eh_frame_hdr != !o->eh_frame_hdr_sz ||
	    !o->eh_frame != !o->eh_frame_hdr)
		return -EINVAL;
	return 0;
}

static int pi_check_op(const struct perfinject_code_op *op,
		       struct perfinject_load_opts *o,
		       const struct perfinject_load_opts **lo, size_t *name_len)
{
	uint64_t end;
	int err;

	if (op->flags)
		return -EINVAL;
	switch (op->op) {
	case PERFINJECT_OP_LOAD:
		if (!op->name || op->new_addr || !op->len ||
		    __builtin_add_overflow(op->addr, op->len, &end))
			return -EINVAL;
		err = pi_load_opts_get(op->opts, op->addr, op->len, o, lo);
		if (err)
			return err;
		if ((*lo)->name_len) {
			*name_len = (*lo)->name_len;
			if (*name_len >= PERFINJECT_NAME_MAX)
				return -ENAMETOOLONG;
			/* A NUL inside would cut the name short in a record. */
			if (memchr(op->name, '\0', *name_len))
				return -EINVAL;
			return 0;
		}
		*name_len = strnlen(op->name, PERFINJECT_NAME_MAX);
		if (*name_len == PERFINJECT_NAME_MAX)
			return -ENAMETOOLONG;
		if (!*name_len)
			return -EINVAL;
		return 0;
	case PERFINJECT_OP_UNLOAD:
		if (op->len || op->new_addr || op->code_index || op->name ||
		    op->opts)
			return -EINVAL;
		return 0;
	case PERFINJECT_OP_MOVE:
		if (op->len || op->code_index || op->name || op->opts ||
		    op->addr == op->new_addr)
			return -EINVAL;
		return 0;
	case PERFINJECT_OP_UNLOAD_INDEX:
		if (op->addr || op->len || op->new_addr || op->name ||
		    op->opts || !op->code_index)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

/* Resolve @op into pi->changes[@nr]; *@loads counts slot reservations. */
static int pi_resolve(struct perfinject *pi,
		      const struct perfinject_code_op *op, unsigned int nr,
		      unsigned int *loads)
{
	struct pi_change *c = &pi->changes[nr];
	struct perf_jit_code_entry *k = &c->kentry;
	struct pi_view v = { 0 }, other;
	size_t name_len = 0;
	uint64_t end;
	int err;

	/* All but lopts, which only a LOAD with options fills and reads. */
	memset(c, 0, offsetof(struct pi_change, lopts));
	err = pi_check_op(op, &c->lopts, &c->lo, &name_len);
	if (err)
		return err;

	switch (op->op) {
	case PERFINJECT_OP_LOAD:
		if (pi_find_addr(pi, nr, op->addr, &v))
			return -EEXIST;
		if (op->code_index && pi_find_index(pi, nr, op->code_index, &v))
			return -EEXIST;
		if ((pi->backends & PERFINJECT_BACKEND_JITDUMP) &&
		    !pi_jitdump_fits(name_len, op->len, c->lo))
			return -E2BIG;
		c->add = pi_entry_new(op->addr, op->len, op->code_index,
				      op->name, name_len);
		if (!c->add)
			return -ENOMEM;
		c->add->kind = c->lo->kind;
		c->add->tier = c->lo->tier;
		if (pi->keep_data && (c->lo->nr_lines || c->lo->eh_frame)) {
			err = pi_data_build(c->lo, op->addr, op->len,
					    c->add->name, &c->add->data,
					    &c->add->data_size);
			if (err) {
				pi_entry_free(c->add);
				c->add = NULL;
				return err;
			}
		}
		(*loads)++;
		c->add->dump_index = pi_dump_index(pi);
		k->op = PERF_JIT_CODE_LOAD;
		k->addr = op->addr;
		k->len = op->len;
		k->code_index = op->code_index;
		k->name = (__u64)(uintptr_t)c->add->name;
		c->name = c->add->name;
		c->name_len = name_len;
		c->dump_index = c->add->dump_index;
		return 0;
	case PERFINJECT_OP_UNLOAD:
	case PERFINJECT_OP_UNLOAD_INDEX:
		if (op->op == PERFINJECT_OP_UNLOAD ?
		    !pi_find_addr(pi, nr, op->addr, &v) :
		    !pi_find_index(pi, nr, op->code_index, &v))
			return -ENOENT;
		k->op = PERF_JIT_CODE_UNLOAD;
		k->addr = v.addr;
		break;
	case PERFINJECT_OP_MOVE:
		if (!pi_find_addr(pi, nr, op->addr, &v))
			return -ENOENT;
		if (__builtin_add_overflow(op->new_addr, v.len, &end))
			return -EINVAL;
		if (pi_find_addr(pi, nr, op->new_addr, &other))
			return -EEXIST;
		c->add = pi_entry_new(op->new_addr, v.len, v.code_index,
				      v.name, v.name_len);
		if (!c->add)
			return -ENOMEM;
		c->add->dump_index = v.dump_index;
		c->add->kind = v.kind;
		c->add->tier = v.tier;
		if (v.data) {
			err = pi_data_move(v.data, v.data_size,
					   (int64_t)(op->new_addr - v.addr),
					   &c->add->data);
			if (err) {
				pi_entry_free(c->add);
				c->add = NULL;
				return err;
			}
			c->add->data_size = v.data_size;
		}
		k->op = PERF_JIT_CODE_MOVE;
		k->addr = v.addr;
		k->new_addr = op->new_addr;
		/* Later changes of the chunk see the name of the new node. */
		v.name = c->add->name;
		break;
	}
	k->len = v.len;
	k->code_index = v.code_index;
	c->name = v.name;
	c->name_len = v.name_len;
	c->dump_index = v.dump_index;
	return 0;
}

struct pi_emit_ctx {
	struct perfinject	*pi;
	unsigned int		nr;
	int			op;
	bool			kernel;
	unsigned int		files;	/* file backends to write */
	int			err;
	int			count;
};

static void pi_emit_flush(struct pi_emit_ctx *x)
{
	struct perfinject *pi = x->pi;
	int err;

	if (!x->nr)
		return;
	if (x->kernel && !x->err) {
		unsigned int sent;

		/* A LOAD goes with the data the registry keeps of it. */
		err = pi_kernel_send_changes(pi, pi->changes, x->nr, &sent);
		if (err)
			x->err = err;
	}
	if (x->files && !x->err)
		pi_files_emit_to(pi, pi->changes, x->nr, x->files);
	if (!x->err)
		x->count += x->nr;
	x->nr = 0;
}

/* Queue a LOAD (or an UNLOAD) of @e; flush every PI_CHUNK. */
static void pi_emit_entry(struct pi_entry *e, void *ctx)
{
	struct pi_emit_ctx *x = ctx;
	struct pi_change *c = &x->pi->changes[x->nr++];

	memset(c, 0, sizeof(*c));
	c->kentry.op = x->op;
	c->kentry.addr = e->addr;
	c->kentry.len = e->len;
	c->kentry.code_index = e->code_index;
	c->lo = &pi_no_opts;
	if (x->op == PERF_JIT_CODE_LOAD) {
		c->kentry.name = (__u64)(uintptr_t)e->name;
		c->add = e;
	}
	c->name = e->name;
	c->name_len = e->name_len;
	c->dump_index = e->dump_index;
	if (x->nr == PI_CHUNK)
		pi_emit_flush(x);
}

/*
 * The process forked since the files were opened: give the child its
 * own, and describe there the code it inherited. Costs a load of a
 * counter the atfork child handler bumps, not a getpid() per call.
 */
static void pi_check_fork(struct perfinject *pi)
{
	unsigned int had = pi->backends & PI_FILE_BACKENDS;
	unsigned long gen = __atomic_load_n(&pi_fork_gen, __ATOMIC_RELAXED);
	struct pi_emit_ctx x = { .pi = pi, .op = PERF_JIT_CODE_LOAD,
				 .files = PI_FILE_BACKENDS };

	if (pi->fork_gen == gen)
		return;
	pi->fork_gen = gen;
	pi_files_close(pi, false);
	pi->pid = getpid();
	if (!had)
		return;
	pi_open_files(pi, had, false);
	if (!(pi->backends & PI_FILE_BACKENDS))
		return;
	pi_registry_for_each(pi, pi_emit_entry, &x);
	pi_emit_flush(&x);
}

/*
 * What perfinject__free() promises: every live entry is gone. The files
 * have no record for that; the kernel has.
 */
static void pi_unload_all(struct perfinject *pi)
{
	struct pi_emit_ctx x = { .pi = pi, .op = PERF_JIT_CODE_UNLOAD,
				 .kernel = true };

	if (!(pi->backends & PERFINJECT_BACKEND_KERNEL) ||
	    !pi_addr_count(&pi->by_addr))
		return;
	pi_registry_for_each(pi, pi_emit_entry, &x);
	pi_emit_flush(&x);
	if (x.err)
		pi_warn("free: the kernel refused the unloads after %d of %zu: %s\n",
			x.count, pi_addr_count(&pi->by_addr), strerror(-x.err));
}

/*
 * Apply up to PI_CHUNK operations: stop at the first that does not
 * resolve; commit the rest, send them to the kernel, and undo what the
 * kernel did not take. Called with pi->lock held.
 */
static int pi_run_chunk(struct perfinject *pi,
			const struct perfinject_code_op *ops, unsigned int n,
			unsigned int *applied)
{
	unsigned int nr = 0, loads = 0, i, sent;
	int err = 0, kerr;

	/* One operation has no earlier one in its chunk to look up. */
	if (n > 1)
		pi_chunk_begin(pi);
	pi_addr_walk_begin();
	for (i = 0; i < n; i++) {
		err = pi_resolve(pi, &ops[i], nr, &loads);
		if (err)
			break;
		if (n > 1)
			pi_chunk_note(pi, nr);
		nr++;
	}
	pi_addr_walk_end();

	/* Room in the tables now: nothing may fail once the kernel took it. */
	if (nr && pi_registry_reserve(pi, loads)) {
		for (i = 0; i < nr; i++)
			if (pi->changes[i].add)
				pi_entry_free(pi->changes[i].add);
		*applied = 0;
		return -ENOMEM;
	}
	if (!nr) {
		*applied = 0;
		return err;
	}

	/*
	 * Into the registry before the kernel: a profiler that attaches
	 * meanwhile enables its event, then reads the registry. A change
	 * sent before the event was on is in the registry by the time it
	 * reads; one sent after comes to it live.
	 */
	pi_registry_commit(pi, pi->changes, nr);
	if (pi->backends & PERFINJECT_BACKEND_KERNEL) {
		kerr = pi_kernel_send_changes(pi, pi->changes, nr, &sent);
		if (kerr) {
			/* It delivered those before the one it refused. */
			pi_registry_undo(pi, pi->changes + sent, nr - sent);
			nr = sent;
			err = kerr;
		}
	}
	if (nr)
		pi_files_emit(pi, pi->changes, nr);
	pi_registry_reap(pi);
	*applied = nr;
	return err;
}

static int pi_apply(struct perfinject *pi, const struct perfinject_code_op *ops,
		    size_t n, size_t *done)
{
	unsigned int applied, chunk;
	struct pi_entry *retired;
	int err = 0;

	*done = 0;
	pthread_mutex_lock(&pi->lock);
	pi_check_fork(pi);
	while (*done < n && !err) {
		chunk = n - *done > PI_CHUNK ? PI_CHUNK : n - *done;
		err = pi_run_chunk(pi, ops + *done, chunk, &applied);
		*done += applied;
	}
	retired = pi_registry_take_retired(pi);
	pthread_mutex_unlock(&pi->lock);
	/* The grace period without the lock: other writers go on. */
	if (retired)
		pi_registry_free_retired(retired);
	return err;
}

static int pi_apply_one(struct perfinject *pi,
			const struct perfinject_code_op *op)
{
	size_t done;

	if (!pi)
		return pi_err(-EINVAL);
	return pi_err(pi_apply(pi, op, 1, &done));
}

PERFINJECT_API int perfinject__load(struct perfinject *pi, const char *name,
				    uint64_t addr, uint64_t len,
				    uint64_t code_index)
{
	struct perfinject_code_op op = {
		.op		= PERFINJECT_OP_LOAD,
		.addr		= addr,
		.len		= len,
		.code_index	= code_index,
		.name		= name,
	};

	return pi_apply_one(pi, &op);
}

PERFINJECT_API int
perfinject__load_opts(struct perfinject *pi, const char *name, uint64_t addr,
		      uint64_t len, uint64_t code_index,
		      const struct perfinject_load_opts *opts)
{
	struct perfinject_code_op op = {
		.op		= PERFINJECT_OP_LOAD,
		.addr		= addr,
		.len		= len,
		.code_index	= code_index,
		.name		= name,
		.opts		= opts,
	};

	return pi_apply_one(pi, &op);
}

PERFINJECT_API int perfinject__unload(struct perfinject *pi, uint64_t addr)
{
	struct perfinject_code_op op = {
		.op	= PERFINJECT_OP_UNLOAD,
		.addr	= addr,
	};

	return pi_apply_one(pi, &op);
}

PERFINJECT_API int perfinject__unload_index(struct perfinject *pi,
					    uint64_t code_index)
{
	struct perfinject_code_op op = {
		.op		= PERFINJECT_OP_UNLOAD_INDEX,
		.code_index	= code_index,
	};

	return pi_apply_one(pi, &op);
}

PERFINJECT_API int perfinject__move(struct perfinject *pi, uint64_t old_addr,
				    uint64_t new_addr)
{
	struct perfinject_code_op op = {
		.op		= PERFINJECT_OP_MOVE,
		.addr		= old_addr,
		.new_addr	= new_addr,
	};

	return pi_apply_one(pi, &op);
}

/*
 * perfinject__batch() has two versions: 0.1's operations had no opts
 * field, so programs built against it step through a smaller struct.
 * Only the shared library has versions; in the archive the name is the
 * current one (as libbpf does).
 */
#ifdef PI_SHARED
#define PI_COMPAT_VERSION(internal, api, ver) \
	__asm__(".symver " #internal "," #api "@" #ver)
#define PI_DEFAULT_VERSION(internal, api, ver) \
	__asm__(".symver " #internal "," #api "@@" #ver)
#define PI_VERSIONED	PERFINJECT_API
#else
#define PI_COMPAT_VERSION(internal, api, ver)
#define PI_DEFAULT_VERSION(internal, api, ver) \
	extern typeof(internal) api __attribute__((alias(#internal)))
#define PI_VERSIONED	PI_HIDDEN
#endif

struct pi_code_op_v1 {
	uint32_t	op;
	uint32_t	flags;
	uint64_t	addr;
	uint64_t	len;
	uint64_t	new_addr;
	uint64_t	code_index;
	const char	*name;
};

static int pi_batch_check(struct perfinject *pi, const void *ops, size_t n)
{
	if (!pi || (!ops && n))
		return -EINVAL;
	if (n > INT_MAX)
		return -E2BIG;
	return 0;
}

PI_VERSIONED int perfinject__batch_v2(struct perfinject *pi,
					const struct perfinject_code_op *ops,
					size_t n)
{
	size_t done;
	int err;

	err = pi_batch_check(pi, ops, n);
	if (err || !n)
		return pi_err(err);
	err = pi_apply(pi, ops, n, &done);
	if (done)
		return done;
	return pi_err(err);
}

PI_DEFAULT_VERSION(perfinject__batch_v2, perfinject__batch,
		   LIBPERFINJECT_0.2.0);

PI_COMPAT_VERSION(perfinject__batch_v1, perfinject__batch,
		  LIBPERFINJECT_0.1.0);
PI_VERSIONED int perfinject__batch_v1(struct perfinject *pi,
					const struct pi_code_op_v1 *ops,
					size_t n)
{
	struct perfinject_code_op conv[64];
	size_t done = 0, part, applied, i;
	int err;

	err = pi_batch_check(pi, ops, n);
	if (err || !n)
		return pi_err(err);
	while (done < n) {
		part = n - done < 64 ? n - done : 64;
		for (i = 0; i < part; i++) {
			const struct pi_code_op_v1 *o = &ops[done + i];

			conv[i] = (struct perfinject_code_op){
				.op = o->op, .flags = o->flags,
				.addr = o->addr, .len = o->len,
				.new_addr = o->new_addr,
				.code_index = o->code_index, .name = o->name,
			};
		}
		err = pi_apply(pi, conv, part, &applied);
		done += applied;
		if (err)
			break;
	}
	if (done)
		return done;
	return pi_err(err);
}

struct pi_range_ctx {
	uint64_t	start;
	uint64_t	end;
	uint64_t	*addrs;
	size_t		nr;
};

static void pi_range_collect(struct pi_entry *e, void *ctx)
{
	struct pi_range_ctx *r = ctx;

	if (e->addr >= r->start && e->addr < r->end) {
		if (r->addrs)
			r->addrs[r->nr] = e->addr;
		r->nr++;
	}
}

PERFINJECT_API int perfinject__unload_range(struct perfinject *pi,
					    uint64_t addr, uint64_t len)
{
	struct pi_range_ctx r = { .start = addr };
	struct perfinject_code_op *ops = NULL;
	struct pi_entry *retired;
	unsigned int applied, chunk;
	size_t done = 0, i;
	int err = 0;

	if (!pi || !len || __builtin_add_overflow(addr, len, &r.end))
		return pi_err(-EINVAL);
	pthread_mutex_lock(&pi->lock);
	pi_check_fork(pi);
	pi_registry_for_each(pi, pi_range_collect, &r);
	if (r.nr > INT_MAX) {
		err = -E2BIG;
		goto out;
	}
	if (r.nr) {
		r.addrs = malloc(r.nr * sizeof(*r.addrs));
		ops = calloc(r.nr < PI_CHUNK ? r.nr : PI_CHUNK, sizeof(*ops));
		if (!r.addrs || !ops) {
			err = -ENOMEM;
			goto out;
		}
		r.nr = 0;
		pi_registry_for_each(pi, pi_range_collect, &r);
	}
	/* One chunk at a time: the kernel gets up to 1024 per call. */
	while (done < r.nr && !err) {
		chunk = r.nr - done > PI_CHUNK ? PI_CHUNK : r.nr - done;
		for (i = 0; i < chunk; i++)
			ops[i] = (struct perfinject_code_op){
				.op = PERFINJECT_OP_UNLOAD,
				.addr = r.addrs[done + i],
			};
		err = pi_run_chunk(pi, ops, chunk, &applied);
		done += applied;
	}
out:
	retired = pi_registry_take_retired(pi);
	pthread_mutex_unlock(&pi->lock);
	if (retired)
		pi_registry_free_retired(retired);
	free(ops);
	free(r.addrs);
	if (done)
		return done;
	return pi_err(err);
}

PERFINJECT_API int perfinject__rundown(struct perfinject *pi)
{
	struct pi_emit_ctx x = { .pi = pi, .op = PERF_JIT_CODE_LOAD,
				 .files = PI_FILE_BACKENDS };

	if (!pi)
		return pi_err(-EINVAL);
	pthread_mutex_lock(&pi->lock);
	pi_check_fork(pi);
	x.kernel = pi->backends & PERFINJECT_BACKEND_KERNEL;
	pi_registry_for_each(pi, pi_emit_entry, &x);
	pi_emit_flush(&x);
	pthread_mutex_unlock(&pi->lock);
	return x.err ? pi_err(x.err) : x.count;
}

PERFINJECT_API int perfinject__enable(struct perfinject *pi,
				      unsigned int backends)
{
	struct pi_emit_ctx x = { .pi = pi, .op = PERF_JIT_CODE_LOAD };
	unsigned int had, want;
	int err = 0;

	if (!pi || !backends || (backends & ~PERFINJECT_BACKEND_ALL))
		return pi_err(-EINVAL);
	pthread_mutex_lock(&pi->lock);
	pi_check_fork(pi);
	had = pi->backends;
	want = backends & ~had;
	if ((want & PERFINJECT_BACKEND_KERNEL) && pi_kernel_probe()) {
		err = -EOPNOTSUPP;
		want &= ~PERFINJECT_BACKEND_KERNEL;
	}
	if (want & PI_FILE_BACKENDS) {
		int ferr = pi_open_files(pi, want & PI_FILE_BACKENDS, true);

		err = err ? err : ferr;
	}
	if (want & PERFINJECT_BACKEND_KERNEL)
		__atomic_or_fetch(&pi->backends, PERFINJECT_BACKEND_KERNEL,
				  __ATOMIC_RELAXED);
	/* The code live now, to the backends new to it only. */
	x.kernel = (pi->backends & ~had) & PERFINJECT_BACKEND_KERNEL;
	x.files = (pi->backends & ~had) & PI_FILE_BACKENDS;
	if (x.kernel || x.files) {
		pi_registry_for_each(pi, pi_emit_entry, &x);
		pi_emit_flush(&x);
		if (x.err)
			pi_warn("enable: the kernel refused the live code after %d entries: %s\n",
				x.count, strerror(-x.err));
	}
	pthread_mutex_unlock(&pi->lock);
	return pi_err(err);
}

PERFINJECT_API int perfinject__disable(struct perfinject *pi,
				       unsigned int backends)
{
	if (!pi || !backends || (backends & ~PERFINJECT_BACKEND_ALL))
		return pi_err(-EINVAL);
	pthread_mutex_lock(&pi->lock);
	pi_check_fork(pi);
	if (backends & PI_FILE_BACKENDS)
		pi_files_close_some(pi, backends & PI_FILE_BACKENDS, true);
	if (backends & PERFINJECT_BACKEND_KERNEL)
		__atomic_and_fetch(&pi->backends, ~PERFINJECT_BACKEND_KERNEL,
				   __ATOMIC_RELAXED);
	pthread_mutex_unlock(&pi->lock);
	return 0;
}

PERFINJECT_API int perfinject__find(struct perfinject *pi, uint64_t addr,
				    struct perfinject_code *code,
				    char *name_buf, size_t name_sz)
{
	struct pi_entry *e;

	if (!pi || !code || (name_buf && !name_sz))
		return pi_err(-EINVAL);
	/* pi->lock, or with URCU=1 no lock at all (index.h). */
	pi_addr_read_lock(&pi->lock);
	e = pi_lookup_addr(pi, addr);
	if (e) {
		code->addr = e->addr;
		code->len = e->len;
		code->code_index = e->code_index;
		code->name = NULL;
		if (name_buf) {
			size_t n = e->name_len < name_sz - 1 ?
				   e->name_len : name_sz - 1;

			memcpy(name_buf, e->name, n);
			name_buf[n] = '\0';
			code->name = name_buf;
		}
	}
	pi_addr_read_unlock(&pi->lock);
	return e ? 0 : pi_err(-ENOENT);
}

/* The first published struct perfinject_code_info. */
#define PI_CODE_INFO_SIZE_VER0 \
	offsetofend(struct perfinject_code_info, __reserved)

PERFINJECT_API int perfinject__find_info(struct perfinject *pi, uint64_t addr,
					 struct perfinject_code_info *info,
					 char *name_buf, size_t name_sz)
{
	struct perfinject_code_info out = { 0 };
	struct pi_entry *e;
	size_t n;

	if (!pi || !info || info->sz < PI_CODE_INFO_SIZE_VER0 ||
	    (name_buf && !name_sz))
		return pi_err(-EINVAL);
	pi_addr_read_lock(&pi->lock);
	e = pi_lookup_addr(pi, addr);
	if (e) {
		out.addr = e->addr;
		out.len = e->len;
		out.code_index = e->code_index;
		out.kind = e->kind;
		out.tier = e->tier;
		out.name_len = e->name_len;
		if (name_buf) {
			n = e->name_len < name_sz - 1 ? e->name_len :
							name_sz - 1;
			memcpy(name_buf, e->name, n);
			name_buf[n] = '\0';
		}
	}
	pi_addr_read_unlock(&pi->lock);
	if (!e)
		return pi_err(-ENOENT);
	/* What this library knows, within what the caller has. */
	out.sz = info->sz;
	memcpy(info, &out, info->sz < sizeof(out) ? info->sz : sizeof(out));
	return 0;
}

PERFINJECT_API size_t perfinject__count(struct perfinject *pi)
{
	if (!pi) {
		errno = EINVAL;
		return 0;
	}
	return __atomic_load_n(&pi->nr_live, __ATOMIC_RELAXED);
}
