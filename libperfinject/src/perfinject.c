// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Handles, options, backend selection, and the engine every operation
 * goes through: resolve a chunk of operations against the registry,
 * hand it to the kernel, then commit it to the registry and the files.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define PI_CHUNK	PERF_JIT_CODE_MAX_ENTRIES
#define PI_FILE_BACKENDS (PERFINJECT_BACKEND_PERFMAP | \
			  PERFINJECT_BACKEND_JITDUMP)
#define PI_KNOWN_FLAGS	(PERFINJECT_F_STRICT | PERFINJECT_F_NO_ENV)

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

/* All handles, so that fork() can take their locks. */
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static struct perfinject *handles;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/*
 * Hold every lock the library has across fork(), so the child gets
 * them in a known state, and let liburcu do the same for its own.
 */
static void pi_atfork_prepare(void)
{
	struct perfinject *pi;

	pthread_mutex_lock(&handles_lock);
	for (pi = handles; pi; pi = pi->next)
		pthread_mutex_lock(&pi->lock);
	pi_publish_lock();
	urcu_bp_call_rcu_before_fork();
	urcu_bp_before_fork();
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
	urcu_bp_after_fork_parent();
	urcu_bp_call_rcu_after_fork_parent();
	pi_atfork_unlock();
}

static void pi_atfork_child(void)
{
	urcu_bp_after_fork_child();
	urcu_bp_call_rcu_after_fork_child();
	pi_atfork_unlock();
}

static void pi_atfork_register(void)
{
	pthread_atfork(pi_atfork_prepare, pi_atfork_parent, pi_atfork_child);
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
	const char *env = getenv("PERFINJECT_BACKENDS");
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
			pi->backends |= PERFINJECT_BACKEND_PERFMAP;
		else if (strict)
			return err;
	}
	if (want & PERFINJECT_BACKEND_JITDUMP) {
		err = pi_jitdump_open(pi);
		if (!err)
			pi->backends |= PERFINJECT_BACKEND_JITDUMP;
		else if (strict)
			return err;
	}
	return 0;
}

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
	if (!want) {
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
	pi->perfmap.fd = -1;
	pi->jitdump.fd = -1;
	pi->pid = getpid();
	pi->dir = strdup(opts && opts->dir ? opts->dir : "/tmp");
	pi->changes = calloc(PI_CHUNK, sizeof(*pi->changes));
	pi->kentries = calloc(PI_CHUNK, sizeof(*pi->kentries));
	if (!pi->dir || !pi->changes || !pi->kentries)
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
	free(pi->kentries);
	free(pi->changes);
	free(pi->dir);
	pthread_mutex_destroy(&pi->lock);
	free(pi);
err_out:
	errno = -err;
	return NULL;
}

PERFINJECT_API void perfinject__free(struct perfinject *pi)
{
	struct perfinject **pp;

	if (!pi)
		return;
	pthread_mutex_lock(&handles_lock);
	for (pp = &handles; *pp; pp = &(*pp)->next) {
		if (*pp == pi) {
			*pp = pi->next;
			break;
		}
	}
	pthread_mutex_unlock(&handles_lock);

	pthread_mutex_lock(&pi->lock);
	/* A child must not write the close record into its parent's file. */
	pi_files_close(pi, pi->pid == getpid());
	pi_registry_fini(pi);
	pthread_mutex_unlock(&pi->lock);

	free(pi->code.data);
	free(pi->out.data);
	free(pi->kentries);
	free(pi->changes);
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
}

static void pi_view_of_entry(const struct pi_entry *e, struct pi_view *v)
{
	v->addr = e->addr;
	v->len = e->len;
	v->code_index = e->code_index;
	v->dump_index = e->dump_index;
	v->name = e->name;
	v->name_len = e->name_len;
}

/*
 * The newest change of this chunk about the key decides; without one,
 * the registry does. Chunks are at most PI_CHUNK long, so the backward
 * scan stays cheap next to a system call.
 */
static bool pi_find_addr(struct perfinject *pi, unsigned int nr,
			 uint64_t addr, struct pi_view *v)
{
	const struct pi_change *c;
	struct pi_entry *e;

	while (nr--) {
		c = &pi->changes[nr];
		switch (c->kentry.op) {
		case PERF_JIT_CODE_LOAD:
			if (c->kentry.addr != addr)
				break;
			pi_view_of_change(c, addr, v);
			return true;
		case PERF_JIT_CODE_UNLOAD:
			if (c->kentry.addr == addr)
				return false;
			break;
		case PERF_JIT_CODE_MOVE:
			if (c->kentry.new_addr == addr) {
				pi_view_of_change(c, addr, v);
				return true;
			}
			if (c->kentry.addr == addr)
				return false;
			break;
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
	const struct pi_change *c;
	struct pi_entry *e;

	while (nr--) {
		c = &pi->changes[nr];
		if (c->kentry.code_index != code_index)
			continue;
		switch (c->kentry.op) {
		case PERF_JIT_CODE_LOAD:
			pi_view_of_change(c, c->kentry.addr, v);
			return true;
		case PERF_JIT_CODE_UNLOAD:
			return false;
		case PERF_JIT_CODE_MOVE:
			pi_view_of_change(c, c->kentry.new_addr, v);
			return true;
		}
	}
	e = pi_lookup_index(pi, code_index);
	if (!e)
		return false;
	pi_view_of_entry(e, v);
	return true;
}

static int pi_check_op(const struct perfinject_code_op *op, size_t *name_len)
{
	uint64_t end;

	if (op->flags)
		return -EINVAL;
	switch (op->op) {
	case PERFINJECT_OP_LOAD:
		if (!op->name || op->new_addr)
			return -EINVAL;
		*name_len = strnlen(op->name, PERFINJECT_NAME_MAX);
		if (*name_len == PERFINJECT_NAME_MAX)
			return -ENAMETOOLONG;
		if (!*name_len || !op->len ||
		    __builtin_add_overflow(op->addr, op->len, &end))
			return -EINVAL;
		return 0;
	case PERFINJECT_OP_UNLOAD:
		if (op->len || op->new_addr || op->code_index || op->name)
			return -EINVAL;
		return 0;
	case PERFINJECT_OP_MOVE:
		if (op->len || op->code_index || op->name ||
		    op->addr == op->new_addr)
			return -EINVAL;
		return 0;
	case PERFINJECT_OP_UNLOAD_INDEX:
		if (op->addr || op->len || op->new_addr || op->name ||
		    !op->code_index)
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

	err = pi_check_op(op, &name_len);
	if (err)
		return err;
	memset(c, 0, sizeof(*c));

	switch (op->op) {
	case PERFINJECT_OP_LOAD:
		if (pi_find_addr(pi, nr, op->addr, &v))
			return -EEXIST;
		if (op->code_index && pi_find_index(pi, nr, op->code_index, &v))
			return -EEXIST;
		if (pi->backends & PERFINJECT_BACKEND_JITDUMP) {
			err = pi_code_readable(pi, op->addr, op->len);
			if (err)
				return err;
		}
		err = pi_publish_reserve(1);
		if (err)
			return err;
		c->add = pi_entry_new(op->addr, op->len, op->code_index,
				      op->name, name_len);
		if (!c->add) {
			pi_publish_unreserve(1);
			return -ENOMEM;
		}
		(*loads)++;
		/* perf inject names a file after it: never 0, never reused. */
		c->add->dump_index = op->code_index ? op->code_index :
				     (1ULL << 63) | ++pi->next_dump_index;
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

/* The process forked since the files were opened: give it its own. */
static void pi_check_fork(struct perfinject *pi)
{
	unsigned int had = pi->backends & PI_FILE_BACKENDS;
	pid_t pid = getpid();

	if (pi->pid == pid)
		return;
	pi_files_close(pi, false);
	pi->pid = pid;
	if (had) {
		pi_open_files(pi, had, false);
		/* The child has the parent's code: describe it there too. */
		if (pi->backends & PI_FILE_BACKENDS) {
			struct cds_lfht_iter iter;
			struct pi_entry *e;
			unsigned int nr = 0;

			pi_read_lock();
			cds_lfht_for_each_entry(pi->by_addr, &iter, e,
						addr_node) {
				struct pi_change *c = &pi->changes[nr++];

				memset(c, 0, sizeof(*c));
				c->kentry.op = PERF_JIT_CODE_LOAD;
				c->kentry.addr = e->addr;
				c->kentry.len = e->len;
				c->name = e->name;
				c->name_len = e->name_len;
				c->dump_index = e->dump_index;
				if (nr == PI_CHUNK) {
					pi_files_emit(pi, pi->changes, nr);
					nr = 0;
				}
			}
			pi_files_emit(pi, pi->changes, nr);
			pi_read_unlock();
		}
	}
}

/*
 * Apply up to PI_CHUNK operations: stop at the first that does not
 * resolve; send the rest to the kernel; commit what the kernel took.
 * Called with pi->lock held.
 */
static int pi_run_chunk(struct perfinject *pi,
			const struct perfinject_code_op *ops, unsigned int n,
			unsigned int *applied)
{
	unsigned int nr = 0, loads = 0, i;
	int err = 0, kerr;

	pi_read_lock();
	for (i = 0; i < n; i++) {
		err = pi_resolve(pi, &ops[i], nr, &loads);
		if (err)
			break;
		nr++;
	}

	if (nr && (pi->backends & PERFINJECT_BACKEND_KERNEL)) {
		for (i = 0; i < nr; i++)
			pi->kentries[i] = pi->changes[i].kentry;
		kerr = pi_kernel_send(pi, pi->kentries, nr);
		if (kerr) {
			/*
			 * The kernel refused the call, so it delivered
			 * nothing. Find the longest prefix it takes, one
			 * entry at a time, and stop at the entry it refuses.
			 */
			for (i = 0; i < nr; i++) {
				kerr = pi_kernel_send(pi, &pi->kentries[i], 1);
				if (kerr)
					break;
			}
			if (i < nr) {
				unsigned int j;

				for (j = i; j < nr; j++) {
					struct pi_change *c = &pi->changes[j];

					if (c->kentry.op == PERF_JIT_CODE_LOAD)
						pi_publish_unreserve(1);
					if (c->add)
						pi_entry_free(c->add);
				}
				nr = i;
				err = kerr;
			}
		}
	}

	if (nr) {
		pi_registry_commit(pi, pi->changes, nr);
		pi_files_emit(pi, pi->changes, nr);
	}
	pi_read_unlock();
	*applied = nr;
	return err;
}

static int pi_apply(struct perfinject *pi, const struct perfinject_code_op *ops,
		    size_t n, size_t *done)
{
	unsigned int applied, chunk;
	int err = 0;

	*done = 0;
	pthread_mutex_lock(&pi->lock);
	pi_check_fork(pi);
	while (*done < n && !err) {
		chunk = n - *done > PI_CHUNK ? PI_CHUNK : n - *done;
		err = pi_run_chunk(pi, ops + *done, chunk, &applied);
		*done += applied;
	}
	pthread_mutex_unlock(&pi->lock);
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

PERFINJECT_API int perfinject__batch(struct perfinject *pi,
				     const struct perfinject_code_op *ops,
				     size_t n)
{
	size_t done;
	int err;

	if (!pi || (!ops && n))
		return pi_err(-EINVAL);
	if (n > INT_MAX)
		return pi_err(-E2BIG);
	if (!n)
		return 0;
	err = pi_apply(pi, ops, n, &done);
	if (done)
		return done;
	return pi_err(err);
}

PERFINJECT_API int perfinject__rundown(struct perfinject *pi)
{
	struct cds_lfht_iter iter;
	unsigned int nr = 0, i;
	struct pi_entry *e;
	int err = 0, count = 0;

	if (!pi)
		return pi_err(-EINVAL);
	pthread_mutex_lock(&pi->lock);
	pi_check_fork(pi);
	pi_read_lock();
	cds_lfht_first(pi->by_addr, &iter);
	do {
		struct cds_lfht_node *node = cds_lfht_iter_get_node(&iter);

		if (node) {
			struct pi_change *c = &pi->changes[nr++];

			e = caa_container_of(node, struct pi_entry, addr_node);
			pi_tsan_acquire(e);
			memset(c, 0, sizeof(*c));
			c->kentry.op = PERF_JIT_CODE_LOAD;
			c->kentry.addr = e->addr;
			c->kentry.len = e->len;
			c->kentry.code_index = e->code_index;
			c->kentry.name = (__u64)(uintptr_t)e->name;
			c->name = e->name;
			c->name_len = e->name_len;
			c->dump_index = e->dump_index;
			cds_lfht_next(pi->by_addr, &iter);
		}
		if (nr && (nr == PI_CHUNK || !node)) {
			if (pi->backends & PERFINJECT_BACKEND_KERNEL) {
				for (i = 0; i < nr; i++)
					pi->kentries[i] = pi->changes[i].kentry;
				err = pi_kernel_send(pi, pi->kentries, nr);
				if (err)
					break;
			}
			pi_files_emit(pi, pi->changes, nr);
			count += nr;
			nr = 0;
		}
		if (!node)
			break;
	} while (1);
	pi_read_unlock();
	pthread_mutex_unlock(&pi->lock);
	return err ? pi_err(err) : count;
}

PERFINJECT_API int perfinject__find(struct perfinject *pi, uint64_t addr,
				    struct perfinject_code *code,
				    char *name_buf, size_t name_sz)
{
	struct pi_entry *e;

	if (!pi || !code || (name_buf && !name_sz))
		return pi_err(-EINVAL);
	pi_read_lock();
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
	pi_read_unlock();
	return e ? 0 : pi_err(-ENOENT);
}

PERFINJECT_API size_t perfinject__count(struct perfinject *pi)
{
	size_t n;

	if (!pi) {
		errno = EINVAL;
		return 0;
	}
	pthread_mutex_lock(&pi->lock);
	n = pi->nr_live;
	pthread_mutex_unlock(&pi->lock);
	return n;
}
