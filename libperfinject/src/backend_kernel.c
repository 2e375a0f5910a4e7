// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The kernel backend: PR_PERF_JIT_CODE. */
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "internal.h"

#define PI_KERNEL_OPS_NEEDED	((1 << PERF_JIT_CODE_LOAD) |		\
				 (1 << PERF_JIT_CODE_UNLOAD) |		\
				 (1 << PERF_JIT_CODE_MOVE))

/* The operations the kernel takes, once probed; 0: not yet, or none. */
static int pi_kernel_ops;

/*
 * Probe once per process: 0 if the kernel takes loads, unloads and
 * moves, else -EOPNOTSUPP. A kernel without the prctl fails the probe
 * with EINVAL.
 */
int pi_kernel_probe(void)
{
	static int probed; /* 0: not yet, 1: yes, -1: no */
	int state = __atomic_load_n(&probed, __ATOMIC_RELAXED);
	int ops;

	if (!state) {
		ops = prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 0UL, 0UL);
		state = ops >= 0 &&
			(ops & PI_KERNEL_OPS_NEEDED) == PI_KERNEL_OPS_NEEDED ?
			1 : -1;
		__atomic_store_n(&pi_kernel_ops, state > 0 ? ops : 0,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&probed, state, __ATOMIC_RELAXED);
	}
	return state > 0 ? 0 : -EOPNOTSUPP;
}

/* Send one entry whose name is too long for the kernel, cut to its limit. */
static int pi_kernel_send_cut(const struct perf_jit_code_entry *entry)
{
	const char *src = (const char *)(uintptr_t)entry->name;
	char name[PERF_JIT_CODE_NAME_MAX];
	struct perf_jit_code_entry cut = *entry;
	struct perf_jit_code_args args = {
		.size		= sizeof(args),
		.entries	= (__u64)(uintptr_t)&cut,
		.nr_entries	= 1,
		.entry_size	= sizeof(cut),
	};
	size_t len = sizeof(name) - 1;

	/* Cut before a UTF-8 sequence rather than through it. */
	while (len && ((unsigned char)src[len] & 0xc0) == 0x80)
		len--;
	memcpy(name, src, len);
	name[len] = '\0';
	cut.name = (__u64)(uintptr_t)name;
	if (prctl(PR_PERF_JIT_CODE, (unsigned long)&args, 0UL, 0UL, 0UL) < 0)
		return -errno;
	return 0;
}

/*
 * The prctl consumes entries like write(2): it may take fewer than it was
 * given (it caps the bytes of one call), and an entry it refuses ends the
 * call before it. Go on from where it stopped; a name longer than the
 * kernel takes is cut rather than lost. *@sent: the entries delivered,
 * all of them when this returns 0, else those before the one refused.
 */
int pi_kernel_send(struct perfinject *pi,
		   const struct perf_jit_code_entry *entries, unsigned int nr,
		   unsigned int *sent)
{
	struct perf_jit_code_args args = {
		.size		= sizeof(args),
		.entry_size	= sizeof(*entries),
	};
	unsigned int done = 0;
	int n, err = 0;

	(void)pi;
	while (done < nr) {
		args.entries = (__u64)(uintptr_t)&entries[done];
		args.nr_entries = nr - done;
		n = prctl(PR_PERF_JIT_CODE, (unsigned long)&args, 0UL, 0UL, 0UL);
		if (n > 0) {
			done += n;
			continue;
		}
		if (n == 0) {
			err = -EIO;
			break;
		}
		if (errno != ENAMETOOLONG) {
			err = -errno;
			break;
		}
		err = pi_kernel_send_cut(&entries[done]);
		if (err)
			break;
		done++;
	}
	*sent = done;
	return done == nr ? 0 : err;
}

/*
 * Line tables and unwind information go to the kernel as DATA entries
 * after their LOAD (PERF_RECORD_JIT_CODE_DATA), in the kernel's formats:
 * struct perf_jit_code_lines, with each row's frames outermost first and
 * the names in one string table, and struct perf_jit_code_unwind, with
 * .eh_frame and .eh_frame_hdr where jitdump puts them, after the code
 * rounded up to 8 bytes.
 */

/* A string table: each string once, found by its bytes. */
struct pi_strtab {
	char		*data;
	size_t		len;
	size_t		cap;
	uint32_t	*slots;		/* offsets; 0: empty */
	size_t		mask;
};

static uint64_t pi_str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

/* The offset of @s in @t, added if new; 0 when it does not fit. */
static uint32_t pi_strtab_add(struct pi_strtab *t, const char *s)
{
	size_t i, n = strlen(s) + 1;
	uint32_t off;
	char *p;

	for (i = pi_str_hash(s) & t->mask; t->slots[i]; i = (i + 1) & t->mask)
		if (!strcmp(t->data + t->slots[i], s))
			return t->slots[i];
	if (t->len + n > PERF_JIT_CODE_LINES_MAX)
		return 0;
	if (t->len + n > t->cap) {
		size_t cap = 2 * (t->len + n);

		p = realloc(t->data, cap);
		if (!p)
			return 0;
		t->data = p;
		t->cap = cap;
	}
	off = t->len;
	memcpy(t->data + off, s, n);
	t->len += n;
	t->slots[i] = off;
	return off;
}

/*
 * The line table of @o for code at @addr, in *@buf (malloc'ed) of
 * *@size bytes. -E2BIG when it is over the kernel's limit.
 */
static int pi_kernel_lines(const struct perfinject_load_opts *o, uint64_t addr,
			   void **buf, size_t *size)
{
	struct pi_strtab t = { 0 };
	struct perf_jit_code_lines *out = NULL;
	struct perf_jit_code_line *lines = NULL;
	size_t i, j, nr = 0, frames = 0, row_start = 0;
	const char *row = (const char *)o->lines;
	uint64_t prev_off = UINT64_MAX;
	int err = -ENOMEM;

	for (i = 0; i < o->nr_lines; i++, row += o->line_sz)
		frames += ((const struct perfinject_line *)row)->nr_frames;
	if (frames > PERF_JIT_CODE_LINES_MAX / sizeof(*lines))
		return -E2BIG;
	for (t.mask = 15; t.mask < 2 * frames; t.mask = 2 * t.mask + 1)
		;
	t.slots = calloc(t.mask + 1, sizeof(*t.slots));
	lines = calloc(frames, sizeof(*lines));
	t.data = malloc(64);
	if (!t.slots || !lines || !t.data)
		goto out;
	t.cap = 64;
	t.data[0] = '\0';
	t.len = 1;

	err = -E2BIG;
	row = (const char *)o->lines;
	for (i = 0; i < o->nr_lines; i++, row += o->line_sz) {
		const struct perfinject_line *l = (const void *)row;
		uint64_t off = l->addr - addr;

		if (off > UINT32_MAX)
			goto out;
		/* Rows at one address: the last one holds. */
		if (off == prev_off)
			nr = row_start;
		row_start = nr;
		prev_off = off;
		/* The kernel lists frames outermost first. */
		for (j = 0; j < l->nr_frames; j++) {
			const struct perfinject_frame *f = (const void *)
				((const char *)l->frames +
				 (l->nr_frames - 1 - j) * o->frame_sz);
			struct perf_jit_code_line *k = &lines[nr++];
			const char *fn = f->function;

			k->offset = off;
			k->line = f->line;
			k->column = f->column;
			k->depth = j;
			k->file = pi_strtab_add(&t, f->file);
			/* An inlined frame must name its function. */
			if ((!fn || !*fn) && j)
				fn = "?";
			k->function = fn && *fn ? pi_strtab_add(&t, fn) : 0;
			if (!k->file || (fn && *fn && !k->function))
				goto out;
		}
	}

	*size = sizeof(*out) + nr * sizeof(*lines) + t.len;
	if (*size > PERF_JIT_CODE_LINES_MAX)
		goto out;
	err = -ENOMEM;
	out = malloc(*size);
	if (!out)
		goto out;
	out->nr_lines = nr;
	out->strings_size = t.len;
	memcpy(out->lines, lines, nr * sizeof(*lines));
	memcpy(&out->lines[nr], t.data, t.len);
	*buf = out;
	err = 0;
out:
	free(lines);
	free(t.slots);
	free(t.data);
	return err;
}

/* The unwind information of @o for the code at [@addr, @addr + @len). */
static int pi_kernel_unwind(const struct perfinject_load_opts *o,
			    uint64_t addr, uint64_t len, void **buf,
			    size_t *size)
{
	struct perf_jit_code_unwind *u;
	char *p;

	*size = sizeof(*u) + o->eh_frame_sz + o->eh_frame_hdr_sz;
	if (*size > PERF_JIT_CODE_UNWIND_MAX)
		return -E2BIG;
	p = malloc(*size);
	if (!p)
		return -ENOMEM;
	u = (void *)p;
	u->format = PERF_JIT_CODE_UNWIND_EH_FRAME;
	u->eh_frame_hdr_size = o->eh_frame_hdr_sz;
	u->addr = addr + ((len + 7) & ~7ULL);
	memcpy(p + sizeof(*u), o->eh_frame, o->eh_frame_sz);
	memcpy(p + sizeof(*u) + o->eh_frame_sz, o->eh_frame_hdr,
	       o->eh_frame_hdr_sz);
	*buf = p;
	return 0;
}

/* Payloads in a buffer (struct perfinject_registry_data), 8-aligned. */
#define PI_DATA_ALIGN(n)	(((n) + 7) & ~(size_t)7)

/*
 * The line table and the unwind information of @o, for the code @name at
 * [@addr, @addr + @len), as the payloads of a registry entry's data: in
 * *@data (malloc'ed; NULL when there is none) of *@size bytes. A payload
 * over the kernel's limit is left out with a warning. 0 or -ENOMEM.
 */
int pi_data_build(const struct perfinject_load_opts *o, uint64_t addr,
		  uint64_t len, const char *name, void **data, uint32_t *size)
{
	static const char * const what[] = { "line table",
					      "unwind information" };
	static const uint32_t type[] = { PERF_JIT_CODE_DATA_LINES,
					 PERF_JIT_CODE_DATA_UNWIND };
	void *payload[2] = { NULL, NULL };
	size_t psize[2] = { 0, 0 }, total = 0, off = 0;
	struct perfinject_registry_data *h;
	char *buf;
	int err, i;

	*data = NULL;
	*size = 0;
	for (i = 0; i < 2; i++) {
		if (i == 0 && !o->nr_lines)
			continue;
		if (i == 1 && !o->eh_frame)
			continue;
		err = i == 0 ? pi_kernel_lines(o, addr, &payload[i], &psize[i]) :
			       pi_kernel_unwind(o, addr, len, &payload[i],
						&psize[i]);
		if (err == -ENOMEM)
			goto out;
		if (err) {
			pi_warn("the %s of %s left out: %s\n", what[i], name,
				strerror(-err));
			continue;
		}
		total += sizeof(*h) + PI_DATA_ALIGN(psize[i]);
	}
	err = 0;
	if (!total)
		goto out;
	err = -ENOMEM;
	buf = calloc(1, total);
	if (!buf)
		goto out;
	for (i = 0; i < 2; i++) {
		if (!payload[i])
			continue;
		h = (void *)(buf + off);
		h->type = type[i];
		h->size = psize[i];
		memcpy(h + 1, payload[i], psize[i]);
		off += sizeof(*h) + PI_DATA_ALIGN(psize[i]);
	}
	*data = buf;
	*size = total;
	err = 0;
out:
	free(payload[0]);
	free(payload[1]);
	return err;
}

/* The next payload of @data after offset *@off, or NULL. */
static const struct perfinject_registry_data *
pi_data_next(const void *data, uint32_t size, size_t *off)
{
	const struct perfinject_registry_data *h;

	if (*off + sizeof(*h) > size)
		return NULL;
	h = (const void *)((const char *)data + *off);
	*off += sizeof(*h) + PI_DATA_ALIGN(h->size);
	return h;
}

/*
 * A copy of the data of code that moved by @delta: the unwind
 * information is described as if mapped past the code, so it moves too.
 */
int pi_data_move(const void *data, uint32_t size, int64_t delta, void **out)
{
	const struct perfinject_registry_data *h;
	struct perf_jit_code_unwind *u;
	size_t off = 0;
	char *copy;

	copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, size);
	while ((h = pi_data_next(copy, size, &off))) {
		if (h->type != PERF_JIT_CODE_DATA_UNWIND)
			continue;
		u = (void *)(h + 1);
		u->addr += delta;
	}
	*out = copy;
	return 0;
}

static void pi_kernel_data_entry(struct perf_jit_code_entry *k,
				 const struct perf_jit_code_entry *load,
				 const struct perfinject_registry_data *h)
{
	memset(k, 0, sizeof(*k));
	k->op = PERF_JIT_CODE_DATA;
	k->addr = load->addr;
	k->len = load->len;
	k->code_index = load->code_index;
	k->data = (__u64)(uintptr_t)(h + 1);
	k->data_type = h->type;
	k->data_size = h->size;
}

/*
 * Send a LOAD with options, followed by its line table and unwind
 * information where the kernel takes them: those the registry keeps,
 * or else built for this call. 0 once the LOAD went; a payload the
 * kernel refuses is dropped with a warning, as the load itself stands.
 * Else the LOAD's error.
 */
static int pi_kernel_send_load(struct perfinject *pi,
			       const struct pi_change *c)
{
	const struct perfinject_registry_data *h;
	struct perf_jit_code_entry k[3];
	void *data = NULL;
	uint32_t size = 0;
	unsigned int nr = 1, sent, i;
	size_t off = 0;
	int err;

	k[0] = c->kentry;
	if (pi->keep_data) {
		data = c->add->data;
		size = c->add->data_size;
	} else {
		err = pi_data_build(c->lo, c->kentry.addr, c->kentry.len,
				    c->name, &data, &size);
		if (err)
			pi_warn("kernel: the line table and unwind information of %s not sent: %s\n",
				c->name, strerror(-err));
	}
	while (nr < 3 && (h = pi_data_next(data, size, &off)))
		pi_kernel_data_entry(&k[nr++], &c->kentry, h);

	i = 0;
	err = 0;
	while (i < nr) {
		err = pi_kernel_send(pi, &k[i], nr - i, &sent);
		i += sent;
		if (!err)
			break;
		if (!i)
			break;
		/* The load went: a refused payload is skipped. */
		pi_warn("kernel: refused the %s of %s: %s\n",
			k[i].data_type == PERF_JIT_CODE_DATA_LINES ?
			"line table" : "unwind information",
			c->name, strerror(-err));
		err = 0;
		i++;
	}
	if (!pi->keep_data)
		free(data);
	return err;
}

/*
 * Send the kernel entries of @nr changes: as pi_kernel_send(), with each
 * LOAD's line table and unwind information after it when the kernel
 * takes DATA entries: the options' (a LOAD's c->lo), or what the
 * registry keeps of it (c->add, with PERFINJECT_F_REGISTRY_DATA; so a
 * rundown sends them again). *@sent counts changes.
 */
int pi_kernel_send_changes(struct perfinject *pi, const struct pi_change *chg,
			   unsigned int nr, unsigned int *sent)
{
	bool data = __atomic_load_n(&pi_kernel_ops, __ATOMIC_RELAXED) &
		    (1 << PERF_JIT_CODE_DATA);
	unsigned int done = 0, start, i, n;
	int err = 0;

	while (done < nr) {
		/* Plain entries up to the next LOAD with data. */
		for (start = done, n = 0; done < nr; done++) {
			const struct pi_change *c = &chg[done];

			if (data && c->kentry.op == PERF_JIT_CODE_LOAD &&
			    (pi->keep_data ? c->add->data_size :
			     c->lo->nr_lines || c->lo->eh_frame))
				break;
			pi->kentries[n++] = c->kentry;
		}
		if (n) {
			err = pi_kernel_send(pi, pi->kentries, n, &i);
			if (err) {
				*sent = start + i;
				return err;
			}
		}
		if (done < nr) {
			err = pi_kernel_send_load(pi, &chg[done]);
			if (err)
				break;
			done++;
		}
	}
	*sent = done;
	return err;
}
