// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_api: libFuzzer over libperfinject's API as a runtime calls it:
 * loads (plain, with options, in batches), unloads, moves, range and
 * index unloads, with sizes, flags, option structs, names and addresses
 * from the input, on a registry-only handle. Built with AddressSanitizer
 * and UBSan over the library's own sources.
 *
 * Besides no crash, no leak and bounded memory, the library must keep to
 * its documented contract, checked against a model of the live code
 * after every call: a call the model says must fail fails with that
 * errno, one that succeeds changes what the model says; and at the end
 * of each input perfinject__count(), perfinject__find() and the registry
 * as another process reads it all hold exactly the model's entries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfinject/perfinject.h>

#define MAX_STEPS	256
#define MAX_BATCH	8
/* Every step could load a whole batch: the model never fills. */
#define NR_MODEL	(MAX_STEPS * MAX_BATCH)
#define BASE		0x7f0000000000ULL

struct ent {
	uint64_t addr, len, index;
	char *name;
};

static struct ent model[NR_MODEL];
static size_t nr_model;

static const uint8_t *in;
static size_t in_left;

static uint64_t take(unsigned int bytes)
{
	uint64_t v = 0;

	while (bytes--) {
		v <<= 8;
		if (in_left) {
			v |= *in++;
			in_left--;
		}
	}
	return v;
}

static void fail(const char *what, long got, long want)
{
	fprintf(stderr, "fuzz_api: %s: got %ld, the contract says %ld\n", what,
		got, want);
	abort();
}

static struct ent *by_addr(uint64_t addr)
{
	size_t i;

	for (i = 0; i < nr_model; i++)
		if (model[i].addr == addr)
			return &model[i];
	return NULL;
}

static struct ent *by_index(uint64_t index)
{
	size_t i;

	for (i = 0; index && i < nr_model; i++)
		if (model[i].index == index)
			return &model[i];
	return NULL;
}

static void drop(struct ent *e)
{
	free(e->name);
	*e = model[--nr_model];
}

/* Addresses from a few pages, so that calls meet each other's code. */
static uint64_t an_addr(void)
{
	uint8_t sel = take(1);

	if (sel >= 250)
		return take(8);			/* anywhere, wraps included */
	return BASE + (sel % 16) * 0x100 + (take(1) & 0xf0);
}

static uint64_t a_len(void)
{
	uint8_t sel = take(1);

	if (sel >= 250)
		return take(8);
	return sel % 5 ? (uint64_t)(sel % 64) * 8 : 0;
}

/*
 * A name: mostly short and printable, sometimes empty, at the limit or
 * past it, or with a NUL inside (@len given).
 */
static const char *a_name(char *buf, size_t buf_sz, size_t *len)
{
	uint8_t sel = take(1), n;
	size_t i;

	if (sel >= 252) {
		*len = sel == 252 ? PERFINJECT_NAME_MAX - 1 :
		       sel == 253 ? PERFINJECT_NAME_MAX : 0;
		if (*len >= buf_sz)
			*len = buf_sz - 1;
		memset(buf, 'x', *len);
		buf[*len] = '\0';
		return buf;
	}
	n = sel % 40;
	for (i = 0; i < n; i++)
		buf[i] = 'a' + take(1) % 26;
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int expected_load(const char *name, size_t len, uint64_t addr,
			 uint64_t size, uint64_t index)
{
	if (!len || !size || addr + size < addr)
		return -EINVAL;
	if (len >= PERFINJECT_NAME_MAX)
		return -ENAMETOOLONG;
	if (by_addr(addr) || by_index(index))
		return -EEXIST;
	(void)name;
	return 0;
}

static void model_load(const char *name, size_t len, uint64_t addr,
		       uint64_t size, uint64_t index)
{
	struct ent *e;

	if (nr_model == NR_MODEL)
		abort();
	e = &model[nr_model++];
	e->addr = addr;
	e->len = size;
	e->index = index;
	e->name = strndup(name, len);
	if (!e->name)
		abort();
}

static char bigname[PERFINJECT_NAME_MAX + 8];

static void op_load(struct perfinject *pi, bool with_opts)
{
	uint64_t addr = an_addr(), size = a_len(), index = take(1) % 8;
	size_t len;
	const char *name = a_name(bigname, sizeof(bigname), &len);
	int want = expected_load(name, len, addr, size, index), rc;

	if (with_opts) {
		/* Room for the struct a newer program passes. */
		union {
			struct perfinject_load_opts o;
			unsigned char bytes[512];
		} u;
		PERFINJECT_LOAD_OPTS(o, .kind = take(1) % 7, .tier = take(1));
		uint8_t bad = take(1);

		memset(&u, 0, sizeof(u));
		/* Sizes a program of another version passes. */
		if (bad == 1)
			o.sz = take(1) % sizeof(u);
		if (bad == 2)
			o.line_sz = take(1);
		if (bad == 3) {
			o.nr_lines = take(1) % 3;	/* NULL rows */
			o.lines = NULL;
		}
		u.o = o;
		/* A larger struct whose tail is not zero. */
		if (bad == 4 && o.sz < sizeof(u)) {
			u.o.sz = sizeof(o) + take(1) % (sizeof(u) - sizeof(o));
			if (u.o.sz > sizeof(o))
				u.bytes[u.o.sz - 1] = 1;
		}
		rc = perfinject__load_opts(pi, name, addr, size, index, &u.o);
		if (bad == 4 && u.o.sz > sizeof(o) && rc != -EINVAL)
			fail("load_opts with a non-zero tail", rc, -EINVAL);
		/* A bad kind, size or table adds its own -EINVAL. */
		if (rc == -EINVAL && (bad >= 1 && bad <= 4 ? true :
				      o.kind > PERFINJECT_KIND_WASM))
			return;
	} else {
		rc = perfinject__load(pi, name, addr, size, index);
	}
	if (rc != want && !(rc == -ENOMEM && want == 0))
		fail(with_opts ? "load_opts" : "load", rc, want);
	if (!rc)
		model_load(name, len, addr, size, index);
}

static void op_unload(struct perfinject *pi)
{
	uint64_t addr = an_addr();
	struct ent *e = by_addr(addr);
	int rc = perfinject__unload(pi, addr);

	if (rc != (e ? 0 : -ENOENT))
		fail("unload", rc, e ? 0 : -ENOENT);
	if (e)
		drop(e);
}

static void op_unload_index(struct perfinject *pi)
{
	uint64_t index = take(1) % 8;
	struct ent *e = by_index(index);
	int want = !index ? -EINVAL : e ? 0 : -ENOENT;
	int rc = perfinject__unload_index(pi, index);

	if (rc != want)
		fail("unload_index", rc, want);
	if (e)
		drop(e);
}

static void op_move(struct perfinject *pi)
{
	uint64_t from = an_addr(), to = an_addr();
	struct ent *e = by_addr(from);
	int want, rc;

	/* The arguments are checked before the code is looked up. */
	if (from == to)
		want = -EINVAL;
	else if (!e)
		want = -ENOENT;
	else if (to + e->len < to)
		want = -EINVAL;
	else if (by_addr(to))
		want = -EEXIST;
	else
		want = 0;
	rc = perfinject__move(pi, from, to);
	if (rc != want)
		fail("move", rc, want);
	if (!rc)
		e->addr = to;
}

static void op_unload_range(struct perfinject *pi)
{
	uint64_t addr = an_addr(), len = a_len() * 8;
	size_t i, n = 0;
	int rc;

	for (i = 0; i < nr_model; i++)
		if (model[i].addr >= addr && model[i].addr - addr < len)
			n++;
	rc = perfinject__unload_range(pi, addr, len);
	if (!len || addr + len < addr) {
		if (rc != -EINVAL && rc != 0)
			fail("unload_range of nothing", rc, 0);
		if (rc == -EINVAL)
			return;
	}
	if (rc != (int)n)
		fail("unload_range", rc, (long)n);
	for (i = 0; i < nr_model; )
		if (model[i].addr >= addr && model[i].addr - addr < len)
			drop(&model[i]);
		else
			i++;
}

/*
 * A batch of loads and unloads: applied in order, stopping at the first
 * that fails, which the count says.
 */
static void op_batch(struct perfinject *pi)
{
	struct perfinject_code_op ops[MAX_BATCH];
	char names[MAX_BATCH][48];
	size_t n = 1 + take(1) % MAX_BATCH, i, done;
	int rc;

	memset(ops, 0, sizeof(ops));
	for (i = 0; i < n; i++) {
		size_t len;

		ops[i].op = take(1) % 2 ? PERFINJECT_OP_LOAD :
			    PERFINJECT_OP_UNLOAD;
		ops[i].addr = an_addr();
		if (ops[i].op == PERFINJECT_OP_LOAD) {
			ops[i].len = a_len();
			ops[i].code_index = take(1) % 8;
			ops[i].name = a_name(names[i], sizeof(names[i]), &len);
		}
		if (take(1) == 0xff)
			ops[i].flags = 1;	/* must be zero */
	}
	rc = perfinject__batch(pi, ops, n);
	/* Replay the ops the library says it applied, then its error. */
	for (done = 0; done < n; done++) {
		const struct perfinject_code_op *op = &ops[done];
		int want;

		if (op->flags) {
			/* Refused; which check comes first is the library's. */
			want = -EINVAL;
		} else if (op->op == PERFINJECT_OP_LOAD) {
			want = expected_load(op->name, strlen(op->name),
					     op->addr, op->len,
					     op->code_index);
		} else {
			want = by_addr(op->addr) ? 0 : -ENOENT;
		}
		if (want) {
			if ((size_t)(rc < 0 ? 0 : rc) != done)
				fail("batch: count before a failing op", rc,
				     (long)done);
			if (rc < 0 && rc != want && !op->flags)
				fail("batch: errno of its first op", rc, want);
			return;
		}
		if (op->op == PERFINJECT_OP_LOAD)
			model_load(op->name, strlen(op->name), op->addr,
				   op->len, op->code_index);
		else
			drop(by_addr(op->addr));
	}
	if (done == n && rc != (int)n)
		fail("batch: count", rc, (long)n);
}

struct seen {
	size_t nr;
	bool bad;
};

static int registry_entry(const struct perfinject_code *c, void *ctx)
{
	struct seen *s = ctx;
	struct ent *e = by_addr(c->addr);

	s->nr++;
	if (!e || e->len != c->len || e->index != c->code_index ||
	    strcmp(e->name, c->name))
		s->bad = true;
	return 0;
}

static void check_all(struct perfinject *pi)
{
	uint64_t desc = (uint64_t)(uintptr_t)perfinject_registry__descriptor();
	static char name[PERFINJECT_NAME_MAX];
	struct seen seen = { 0 };
	struct perfinject_code c;
	size_t i;
	int rc;

	if (perfinject__count(pi) != nr_model)
		fail("count", (long)perfinject__count(pi), (long)nr_model);
	for (i = 0; i < nr_model; i++) {
		rc = perfinject__find(pi, model[i].addr, &c, name,
				      sizeof(name));
		if (rc || c.len != model[i].len ||
		    strcmp(name, model[i].name))
			fail("find of a live entry", rc, 0);
	}
	rc = perfinject_registry__read_pid(getpid(), desc, registry_entry,
					   &seen);
	if (rc < 0 || (size_t)rc != nr_model || seen.nr != nr_model ||
	    seen.bad)
		fail("the registry read from outside", rc, (long)nr_model);
}

static int quiet(enum perfinject_print_level level, const char *fmt,
		 va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	PERFINJECT_OPTS(opts, .flags = PERFINJECT_F_NO_ENV |
			PERFINJECT_F_REGISTRY_ONLY);
	struct perfinject *pi;
	int steps = 0;

	perfinject_set_print(quiet);
	in = data;
	in_left = size;
	nr_model = 0;
	pi = perfinject__new(&opts);
	if (!pi)
		abort();
	while (in_left && steps++ < MAX_STEPS) {
		switch (take(1) % 8) {
		case 0:
		case 1:
			op_load(pi, false);
			break;
		case 2:
			op_load(pi, true);
			break;
		case 3:
			op_unload(pi);
			break;
		case 4:
			op_move(pi);
			break;
		case 5:
			op_unload_range(pi);
			break;
		case 6:
			op_unload_index(pi);
			break;
		case 7:
			op_batch(pi);
			break;
		}
	}
	check_all(pi);
	perfinject__free(pi);
	while (nr_model)
		drop(&model[0]);
	return 0;
}
