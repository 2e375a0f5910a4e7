// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The line tables and unwind information of loads, as the payloads the
 * kernel takes in DATA entries and the registry keeps with an entry
 * (PERFINJECT_F_REGISTRY_DATA).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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
static int pi_data_lines(const struct perfinject_load_opts *o, uint64_t addr,
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
static int pi_data_unwind(const struct perfinject_load_opts *o,
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
 * The data of an entry is shared by the entries a move makes of it while
 * it holds nothing that moves with the code: it is counted, and the count
 * sits before the payloads, which stay 8-aligned.
 */
struct pi_data_blob {
	uint32_t	refs;
	uint32_t	__pad;
	char		payloads[];
};

static struct pi_data_blob *pi_data_blob(const void *data)
{
	/* The count is not the payloads': it changes while they do not. */
	return (struct pi_data_blob *)((uintptr_t)data -
				       offsetof(struct pi_data_blob, payloads));
}

/* Room for @size bytes of payloads, zeroed, counted once; or NULL. */
static void *pi_data_alloc(size_t size)
{
	struct pi_data_blob *b = calloc(1, sizeof(*b) + size);

	if (!b)
		return NULL;
	b->refs = 1;
	return b->payloads;
}

void pi_data_put(void *data)
{
	struct pi_data_blob *b;

	if (!data)
		return;
	b = pi_data_blob(data);
	if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(b);
}

/*
 * The line table and the unwind information of @o, for the code @name at
 * [@addr, @addr + @len), as the payloads of a registry entry's data: in
 * *@data (NULL when there is none; pi_data_put() drops it) of *@size
 * bytes. A payload over the kernel's limit is left out with a warning.
 * 0 or -ENOMEM.
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
		err = i == 0 ? pi_data_lines(o, addr, &payload[i], &psize[i]) :
			       pi_data_unwind(o, addr, len, &payload[i],
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
	buf = pi_data_alloc(total);
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

const struct perfinject_registry_data *
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
 * The data of code that moved by @delta, in *@out. The offsets of a line
 * table are from the code's start, so data without unwind information is
 * the same after the move, and shared. Unwind information is described
 * as if mapped past the code (its address moves with it): data that has
 * some is copied, and the copy's moved.
 */
int pi_data_move(const void *data, uint32_t size, int64_t delta, void **out)
{
	const struct perfinject_registry_data *h;
	struct perf_jit_code_unwind *u;
	size_t off = 0;
	char *copy;

	while ((h = pi_data_next(data, size, &off)))
		if (h->type == PERF_JIT_CODE_DATA_UNWIND)
			break;
	if (!h) {
		__atomic_add_fetch(&pi_data_blob(data)->refs, 1,
				   __ATOMIC_RELAXED);
		*out = (void *)data;
		return 0;
	}
	copy = pi_data_alloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, size);
	off = 0;
	while ((h = pi_data_next(copy, size, &off))) {
		if (h->type != PERF_JIT_CODE_DATA_UNWIND)
			continue;
		u = (void *)(h + 1);
		u->addr += delta;
	}
	*out = copy;
	return 0;
}
