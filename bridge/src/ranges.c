// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The live ranges of the process and its libperfinject handle.
 *
 * Runtimes never write an unload, and they reuse addresses: the V8 GC,
 * QEMU's tb_flush and Erlang's purge hand the same memory to new code.
 * So a new range first unloads every live range it overlaps, and the
 * same range with the same name again (Erlang's +JPperf true writes each
 * range to both files) changes nothing.
 *
 * The ranges sit in a treap (a binary search tree on the start address,
 * heap-ordered on random priorities, so its depth stays logarithmic
 * whatever the order of the addresses): finding the ranges a new one
 * overlaps costs O(log n + k).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <perfinject/perfinject.h>

#include "bridge.h"

struct br_range {
	struct br_range	*left;		/* also the free list's link */
	struct br_range	*right;
	uint64_t	start;
	uint64_t	len;
	uint64_t	name_hash;
	uint32_t	name_len;
	uint32_t	prio;
	enum br_kind	kind;		/* the file that described it */
};

/* Ranges are carved from blocks, so a load costs no malloc(). */
#define BR_BLOCK_RANGES	1024

struct br_block {
	struct br_block	*next;
	struct br_range	ranges[BR_BLOCK_RANGES];
};

/* Everything below is under br_tree_lock. */
static pthread_mutex_t br_tree_lock = PTHREAD_MUTEX_INITIALIZER;
static struct br_range *br_root;
static struct br_range *br_free_ranges;
static struct br_block *br_blocks;
static uint64_t br_rand_state = 0x9e3779b97f4a7c15ULL;
static struct perfinject *br_pi;
static bool br_pi_failed;
/* Set in a forked child: the inherited ranges are the parent's. */
static bool br_stale;

/* Overlapping ranges and the operations for them, on the stack if few. */
#define BR_FEW	32

struct br_batch {
	struct br_range		**hit;
	struct perfinject_code_op *ops;
	size_t			nr, cap;
	struct br_range		*hit_few[BR_FEW];
	struct perfinject_code_op ops_few[BR_FEW + 1];
};

static uint32_t br_rand(void)
{
	uint64_t x = br_rand_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	br_rand_state = x;
	return x >> 32;
}

static uint64_t br_hash(const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	while (len--) {
		h ^= (unsigned char)*name++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static struct br_range *br_range_new(void)
{
	struct br_range *r = br_free_ranges;
	struct br_block *b;
	size_t i;

	if (r) {
		br_free_ranges = r->left;
		return r;
	}
	b = malloc(sizeof(*b));
	if (!b)
		return NULL;
	b->next = br_blocks;
	br_blocks = b;
	for (i = 1; i < BR_BLOCK_RANGES; i++) {
		b->ranges[i].left = br_free_ranges;
		br_free_ranges = &b->ranges[i];
	}
	return &b->ranges[0];
}

static void br_range_free(struct br_range *r)
{
	r->left = br_free_ranges;
	br_free_ranges = r;
}

/* Split @t into the ranges that start below @key and the others. */
static void br_split(struct br_range *t, uint64_t key, struct br_range **lo,
		     struct br_range **hi)
{
	if (!t) {
		*lo = NULL;
		*hi = NULL;
	} else if (t->start < key) {
		br_split(t->right, key, &t->right, hi);
		*lo = t;
	} else {
		br_split(t->left, key, lo, &t->left);
		*hi = t;
	}
}

/* Join two treaps; every start in @a is below every start in @b. */
static struct br_range *br_merge(struct br_range *a, struct br_range *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio > b->prio) {
		a->right = br_merge(a->right, b);
		return a;
	}
	b->left = br_merge(a, b->left);
	return b;
}

static void br_insert(struct br_range *r)
{
	struct br_range *lo, *hi;

	r->left = NULL;
	r->right = NULL;
	r->prio = br_rand();
	br_split(br_root, r->start, &lo, &hi);
	br_root = br_merge(br_merge(lo, r), hi);
}

static void br_erase(uint64_t start)
{
	struct br_range **link = &br_root, *t;

	while ((t = *link) && t->start != start)
		link = start < t->start ? &t->left : &t->right;
	if (t)
		*link = br_merge(t->left, t->right);
}

static struct br_range *br_lookup(uint64_t start)
{
	struct br_range *t = br_root;

	while (t && t->start != start)
		t = start < t->start ? t->left : t->right;
	return t;
}

/* The range with the highest start below @key. */
static struct br_range *br_below(uint64_t key)
{
	struct br_range *t = br_root, *best = NULL;

	while (t) {
		if (t->start < key) {
			best = t;
			t = t->right;
		} else {
			t = t->left;
		}
	}
	return best;
}

static int br_batch_add(struct br_batch *b, struct br_range *r)
{
	if (b->nr == b->cap) {
		size_t cap = b->cap * 4;
		struct br_range **hit;
		struct perfinject_code_op *ops;

		hit = malloc(cap * sizeof(*hit));
		ops = malloc((cap + 1) * sizeof(*ops));
		if (!hit || !ops) {
			free(hit);
			free(ops);
			return -ENOMEM;
		}
		memcpy(hit, b->hit, b->nr * sizeof(*hit));
		if (b->hit != b->hit_few) {
			free(b->hit);
			free(b->ops);
		}
		b->hit = hit;
		b->ops = ops;
		b->cap = cap;
	}
	b->hit[b->nr++] = r;
	return 0;
}

/* Every range starting in [@lo, @hi) but @skip, in address order. */
static int br_collect(struct br_batch *b, struct br_range *t, uint64_t lo,
		      uint64_t hi, const struct br_range *skip)
{
	int err = 0;

	if (!t)
		return 0;
	if (t->start > lo)
		err = br_collect(b, t->left, lo, hi, skip);
	if (!err && t->start >= lo && t->start < hi && t != skip)
		err = br_batch_add(b, t);
	if (!err && t->start < hi)
		err = br_collect(b, t->right, lo, hi, skip);
	return err;
}

/* The ranges [@addr, @addr + @len) overlaps, @skip aside. */
static int br_overlaps(struct br_batch *b, uint64_t addr, uint64_t len,
		       const struct br_range *skip)
{
	struct br_range *below = br_below(addr);
	uint64_t end = addr + len;

	b->hit = b->hit_few;
	b->ops = b->ops_few;
	b->nr = 0;
	b->cap = BR_FEW;
	if (below && below != skip && below->start + below->len > addr &&
	    br_batch_add(b, below))
		return -ENOMEM;
	return br_collect(b, br_root, addr, end, skip);
}

static void br_batch_free(struct br_batch *b)
{
	if (b->hit != b->hit_few) {
		free(b->hit);
		free(b->ops);
	}
}

/*
 * Send the unloads of the overlapped ranges and the last operation in
 * one call, and bring the tree in line with what libperfinject applied.
 * Returns 0 when all went through, else the error of the first that did
 * not.
 */
static int br_apply(struct br_batch *b, const struct perfinject_code_op *last)
{
	size_t i, n = b->nr + 1;
	int done, more, err = 0;

	for (i = 0; i < b->nr; i++)
		b->ops[i] = (struct perfinject_code_op){
			.op = PERFINJECT_OP_UNLOAD,
			.addr = b->hit[i]->start,
		};
	b->ops[b->nr] = *last;
	done = perfinject__batch(br_pi, b->ops, n);
	if (done < 0) {
		err = done;
		done = 0;
	} else if ((size_t)done < n) {
		/* Like write(2): once more from there gives the error. */
		more = perfinject__batch(br_pi, b->ops + done, n - done);
		if (more < 0)
			err = more;
		else
			done += more;
		if (!err && (size_t)done < n)
			err = -EIO;
	}
	for (i = 0; i < b->nr && i < (size_t)done; i++) {
		br_erase(b->hit[i]->start);
		br_range_free(b->hit[i]);
	}
	return err;
}

static int br_print(enum perfinject_print_level level, const char *fmt,
		    va_list ap)
{
	char msg[512];

	if (level != PERFINJECT_WARN)
		return 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	br_say("%s", msg);
	return 0;
}

/* Drop what a forked child inherited: its runtime starts afresh. */
static void br_drop_inherited(void)
{
	struct br_block *b;

	br_stale = false;
	br_root = NULL;
	br_free_ranges = NULL;
	while ((b = br_blocks)) {
		br_blocks = b->next;
		free(b);
	}
	/* The child's handle, with the parent's code in its registry. */
	perfinject__free(br_pi);
	br_pi = NULL;
	br_pi_failed = false;
}

/*
 * The handle, made on the first entry: a process that never writes one
 * has none. Only the kernel backend: the runtime writes its files itself.
 */
static int br_handle(void)
{
	if (br_stale)
		br_drop_inherited();
	if (br_pi)
		return 0;
	if (br_pi_failed)
		return -ENODEV;
	perfinject_set_print(br_print);
	/*
	 * The registry keeps the line tables and CFI the runtime wrote to
	 * its jitdump too, for a profiler that attaches later.
	 */
	PERFINJECT_OPTS(opts, .backends = PERFINJECT_BACKEND_KERNEL,
			.flags = PERFINJECT_F_NO_ENV |
				 PERFINJECT_F_REGISTRY_DATA);
	br_pi = perfinject__new(&opts);
	if (br_pi)
		return 0;
	br_pi_failed = true;
	br_say("cannot create the libperfinject handle: %s; not forwarding",
	       strerror(errno));
	return -ENODEV;
}

static bool br_same_name(uint64_t addr, const char *name, size_t name_len)
{
	char buf[PERFINJECT_NAME_MAX];
	struct perfinject_code code;

	if (perfinject__find(br_pi, addr, &code, buf, sizeof(buf)))
		return false;
	return strlen(buf) == name_len && !memcmp(buf, name, name_len);
}

/*
 * [@addr, @addr + @len) now holds the code @name (@name_len bytes, no
 * NUL, 1 to BR_NAME_MAX): the caller checked. @data, if not NULL, is
 * its line table and unwind information. Returns 0 or a negative
 * errno when the bridge could not forward it: -EINVAL when the kernel
 * will not take this entry (a range past the end of user space), which
 * concerns this entry only.
 */
int br_ranges_load(enum br_kind kind, const char *name, size_t name_len,
		   uint64_t addr, uint64_t len, const struct br_load_data *data)
{
	uint64_t hash = br_hash(name, name_len);
	struct br_range *same, *r = NULL;
	struct br_batch b;
	int err;

	PERFINJECT_LOAD_OPTS(lopts, .name_len = name_len);
	if (data) {
		lopts.lines = data->lines;
		lopts.nr_lines = data->nr_lines;
		lopts.eh_frame = data->eh_frame;
		lopts.eh_frame_sz = data->eh_frame_sz;
		lopts.eh_frame_hdr = data->eh_frame_hdr;
		lopts.eh_frame_hdr_sz = data->eh_frame_hdr_sz;
	}
	struct perfinject_code_op load = {
		.op = PERFINJECT_OP_LOAD,
		.addr = addr,
		.len = len,
		.name = name,
		.opts = &lopts,
	};

	pthread_mutex_lock(&br_tree_lock);
	err = br_handle();
	if (err)
		goto out;
	/*
	 * The same range again is the same code when its name is the same,
	 * or when the other file describes it: a runtime that writes both
	 * (Erlang's +JPperf true) names it in each, and not always alike
	 * ("$m:f/1" in the map, "m:f/1" in the jitdump). The first name
	 * stays.
	 */
	same = br_lookup(addr);
	if (same && same->len == len &&
	    (same->kind != kind ||
	     (same->name_len == name_len && same->name_hash == hash &&
	      br_same_name(addr, name, name_len))))
		goto out;
	r = br_range_new();
	err = r ? br_overlaps(&b, addr, len, NULL) : -ENOMEM;
	if (err)
		goto out_free;
	err = br_apply(&b, &load);
	br_batch_free(&b);
	if (err)
		goto out_free;
	r->start = addr;
	r->len = len;
	r->name_hash = hash;
	r->name_len = name_len;
	r->kind = kind;
	br_insert(r);
	goto out;
out_free:
	if (r)
		br_range_free(r);
out:
	pthread_mutex_unlock(&br_tree_lock);
	return err;
}

/*
 * The code at @old_addr moved to @new_addr (a jitdump JIT_CODE_MOVE).
 * Code the bridge never saw cannot move; that is not an error.
 */
int br_ranges_move(uint64_t old_addr, uint64_t new_addr)
{
	struct perfinject_code_op move = {
		.op = PERFINJECT_OP_MOVE,
		.addr = old_addr,
		.new_addr = new_addr,
	};
	struct br_range *r;
	struct br_batch b;
	int err;

	pthread_mutex_lock(&br_tree_lock);
	err = br_handle();
	if (err)
		goto out;
	r = br_lookup(old_addr);
	if (!r || old_addr == new_addr || new_addr + r->len < new_addr)
		goto out;
	err = br_overlaps(&b, new_addr, r->len, r);
	if (err)
		goto out;
	err = br_apply(&b, &move);
	br_batch_free(&b);
	if (err)
		goto out;
	br_erase(old_addr);
	r->start = new_addr;
	br_insert(r);
out:
	pthread_mutex_unlock(&br_tree_lock);
	return err;
}

/*
 * In a forked child (single-threaded): the lock may have been held by a
 * thread that does not exist here, and the ranges are the parent's. The
 * handle and the tree are dropped on the child's first entry, since
 * libperfinject's own fork handling may not have run yet.
 */
void br_ranges_atfork_child(void)
{
	pthread_mutex_init(&br_tree_lock, NULL);
	br_stale = br_pi || br_root;
}
