// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * perfinject__load_opts() and what it carries: a name by pointer and
 * length; options and array elements smaller and larger than this
 * library knows (the zero-tail rule); checks of the line table and the
 * unwind information; JIT_CODE_DEBUG_INFO and JIT_CODE_UNWINDING_INFO
 * in the jitdump right before their LOAD; a batch operation with
 * options; perfinject__unload_range().
 */
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "helpers.h"

static unsigned char code[8][64];

/* A line row followed by a field a future library might know. */
struct line_plus {
	struct perfinject_line l;
	uint64_t future;
};

/*
 * perfinject__find_info() of "hello" (kind FUNCTION, tier 2) at @addr:
 * what it knows within sz; a larger struct's tail untouched; a smaller
 * sz than the first struct refused.
 */
static void check_find_info(struct perfinject *pi, uint64_t addr)
{
	struct {
		struct perfinject_code_info i;
		uint64_t future;
	} big;
	struct perfinject_code_info info = { .sz = sizeof(info) };
	char name[4];

	CHECK_EQ(perfinject__find_info(pi, addr, &info, name, sizeof(name)),
		 0);
	CHECK(info.addr == addr && info.len == 64 && info.code_index == 0 &&
	      info.kind == PERFINJECT_KIND_FUNCTION && info.tier == 2 &&
	      info.name_len == 5 && info.sz == sizeof(info),
	      "find_info: %#llx %llu kind %u tier %u name_len %u",
	      (unsigned long long)info.addr, (unsigned long long)info.len,
	      info.kind, info.tier, info.name_len);
	CHECK(!strcmp(name, "hel"), "truncated name %s", name);

	memset(&big, 0xa5, sizeof(big));
	big.i.sz = sizeof(big);
	CHECK_EQ(perfinject__find_info(pi, addr, &big.i, NULL, 0), 0);
	CHECK(big.i.tier == 2 && big.future == 0xa5a5a5a5a5a5a5a5ULL,
	      "larger struct: tier %u, tail %#llx", big.i.tier,
	      (unsigned long long)big.future);

	info.sz = offsetof(struct perfinject_code_info, tier);
	CHECK_EQ(perfinject__find_info(pi, addr, &info, NULL, 0), -EINVAL);
	info.sz = sizeof(info);
	CHECK_EQ(perfinject__find_info(pi, addr + 1, &info, NULL, 0), -ENOENT);
}

static void check_options(struct perfinject *pi)
{
	struct perfinject_frame f[2] = {
		{ .file = "inner.js", .line = 7, .function = "inner" },
		{ .file = "outer.js", .line = 40, .column = 3 },
	};
	struct perfinject_line rows[2] = {
		{ .addr = (uintptr_t)code[1], .frames = f, .nr_frames = 2 },
		{ .addr = (uintptr_t)code[1] + 16, .frames = &f[1],
		  .nr_frames = 1 },
	};
	struct line_plus plus[1] = {
		{ .l = { .addr = (uintptr_t)code[2], .frames = f,
			 .nr_frames = 1 } },
	};
	unsigned char big[sizeof(struct perfinject_load_opts) + 16] = { 0 };
	struct perfinject_load_opts *bo = (void *)big;
	struct perfinject_code found;
	char name[64];

	/* A name by pointer and length: the rest of the buffer is not it. */
	{
		PERFINJECT_LOAD_OPTS(o, .name_len = 5,
				     .kind = PERFINJECT_KIND_FUNCTION,
				     .tier = 2);

		CHECK_EQ(perfinject__load_opts(pi, "hello, world",
					       (uintptr_t)code[0], 64, 0, &o),
			 0);
		CHECK(!perfinject__find(pi, (uintptr_t)code[0], &found, name,
					sizeof(name)) && !strcmp(name, "hello"),
		      "name %s", name);
		check_find_info(pi, (uintptr_t)code[0]);
		o.name_len = 6;
		CHECK_EQ(perfinject__load_opts(pi, "nul\0in", (uintptr_t)code[7],
					       64, 0, &o), -EINVAL);
		o.name_len = PERFINJECT_NAME_MAX;
		CHECK_EQ(perfinject__load_opts(pi, "x", (uintptr_t)code[7], 64,
					       0, &o), -ENAMETOOLONG);
	}
	/* A line table with an inlined frame; rows checked. */
	{
		PERFINJECT_LOAD_OPTS(o, .lines = rows, .nr_lines = 2);

		rows[1].addr = (uintptr_t)code[1] + 64;	/* outside */
		CHECK_EQ(perfinject__load_opts(pi, "lines", (uintptr_t)code[1],
					       64, 0, &o), -EINVAL);
		rows[1].addr = (uintptr_t)code[1] - 1;	/* out of order */
		CHECK_EQ(perfinject__load_opts(pi, "lines", (uintptr_t)code[1],
					       64, 0, &o), -EINVAL);
		rows[1].addr = (uintptr_t)code[1] + 16;
		rows[1].nr_frames = 0;
		CHECK_EQ(perfinject__load_opts(pi, "lines", (uintptr_t)code[1],
					       64, 0, &o), -EINVAL);
		rows[1].nr_frames = 1;
		f[1].file = NULL;
		CHECK_EQ(perfinject__load_opts(pi, "lines", (uintptr_t)code[1],
					       64, 0, &o), -EINVAL);
		f[1].file = "outer.js";
		o.frame_sz = sizeof(f[0]) - 1;
		CHECK_EQ(perfinject__load_opts(pi, "lines", (uintptr_t)code[1],
					       64, 0, &o), -EINVAL);
		o.frame_sz = sizeof(f[0]);
		CHECK_EQ(perfinject__load_opts(pi, "lines", (uintptr_t)code[1],
					       64, 0, &o), 0);
	}
	/* Elements larger than this library knows: zero tail or EINVAL. */
	{
		PERFINJECT_LOAD_OPTS(o, .lines = &plus[0].l, .nr_lines = 1);

		o.line_sz = sizeof(plus[0]);

		plus[0].future = 1;
		CHECK_EQ(perfinject__load_opts(pi, "plus", (uintptr_t)code[2],
					       64, 0, &o), -EINVAL);
		plus[0].future = 0;
		CHECK_EQ(perfinject__load_opts(pi, "plus", (uintptr_t)code[2],
					       64, 0, &o), 0);
	}
	/* Options larger than known: zero tail accepted, else EINVAL. */
	bo->sz = sizeof(big);
	bo->line_sz = sizeof(struct perfinject_line);
	bo->frame_sz = sizeof(struct perfinject_frame);
	big[sizeof(big) - 1] = 1;
	CHECK_EQ(perfinject__load_opts(pi, "big", (uintptr_t)code[3], 64, 0,
				       bo), -EINVAL);
	big[sizeof(big) - 1] = 0;
	CHECK_EQ(perfinject__load_opts(pi, "big", (uintptr_t)code[3], 64, 0,
				       bo), 0);
	/* Smaller than the first published struct: EINVAL. */
	bo->sz = offsetof(struct perfinject_load_opts, eh_frame_hdr_sz);
	CHECK_EQ(perfinject__load_opts(pi, "small", (uintptr_t)code[7], 64, 0,
				       bo), -EINVAL);
	/* Unknown kind; eh_frame without its header. */
	{
		PERFINJECT_LOAD_OPTS(o, .kind = 99);

		CHECK_EQ(perfinject__load_opts(pi, "k", (uintptr_t)code[7], 64,
					       0, &o), -EINVAL);
		o.kind = 0;
		o.eh_frame = code[6];
		o.eh_frame_sz = 8;
		CHECK_EQ(perfinject__load_opts(pi, "k", (uintptr_t)code[7], 64,
					       0, &o), -EINVAL);
	}
}

/* The jitdump: DEBUG_INFO and UNWINDING_INFO right before their LOAD. */
static void check_jitdump(const char *path)
{
	size_t len;
	char *buf = t_slurp(path, &len), *p, *end;
	uint64_t debug_addr = 0, c4 = (uintptr_t)code[4];
	int debug = 0, unwind = 0, pending_unwind = 0;

	CHECK(buf && len > 40, "read %s", path);
	if (!buf || len <= 40)
		return;
	for (p = buf + 40, end = buf + len; p + 16 <= end; p += t_rd32(p + 4)) {
		uint32_t id = t_rd32(p), size = t_rd32(p + 4);

		CHECK(size >= 16 && p + size <= end, "torn record");
		if (size < 16 || p + size > end)
			break;
		if (id == 2) {		/* JIT_CODE_DEBUG_INFO */
			char *e = p + 32;

			CHECK(!debug_addr, "two debug records in a row");
			debug_addr = t_rd64(p + 16);
			CHECK_EQ(size % 8, 0);
			CHECK_EQ(t_rd64(e), debug_addr);
			if (debug_addr != c4)
				continue;
			debug++;
			CHECK_EQ(t_rd64(p + 24), 2);
			CHECK_EQ(t_rd32(e + 8), 7);	/* innermost: inner.js:7 */
			CHECK(!strcmp(e + 16, "inner.js"), "file %s", e + 16);
			e += 16 + strlen(e + 16) + 1;
			CHECK_EQ(t_rd64(e), c4 + 16);
			CHECK_EQ(t_rd32(e + 8), 40);
			CHECK(!strcmp(e + 16, "outer.js"), "file %s", e + 16);
		} else if (id == 4) {	/* JIT_CODE_UNWINDING_INFO */
			CHECK_EQ(t_rd64(p + 16), 24 + 8);	/* unwinding_size */
			CHECK_EQ(t_rd64(p + 24), 8);	/* eh_frame_hdr_size */
			CHECK_EQ(t_rd64(p + 32), 24 + 8);	/* mapped_size */
			CHECK(!memcmp(p + 40, "EH_FRAME_24_BYTES_OF_CFI", 24) &&
			      !memcmp(p + 64, "EH_HDR_8", 8), "unwind data");
			CHECK_EQ(size % 8, 0);
			pending_unwind = 1;
			unwind++;
		} else if (id == 0) {	/* JIT_CODE_LOAD */
			uint64_t addr = t_rd64(p + 32);

			CHECK(!debug_addr || debug_addr == addr,
			      "debug info of %#llx before the load of %s",
			      (unsigned long long)debug_addr, p + 56);
			CHECK(pending_unwind == (addr == c4),
			      "unwind info and the load of %s", p + 56);
			if (addr == c4)
				CHECK(debug_addr == c4, "no debug info");
			debug_addr = 0;
			pending_unwind = 0;
		}
	}
	CHECK_EQ(debug, 1);
	CHECK_EQ(unwind, 1);
	free(buf);
}

static int hidden_seen(const struct perfinject_code *c, void *ctx)
{
	int *seen = ctx;

	if (!strncmp(c->name, "hidden", 6))
		seen[0]++;
	else if (!strcmp(c->name, "shown"))
		seen[1]++;
	return 0;
}

/*
 * PERFINJECT_F_NO_REGISTRY: the handle works (files, find, count), and
 * a reader of the process sees none of its code, but another handle's.
 */
static void check_no_registry(void)
{
	static unsigned char c[4][16];
	struct perfinject *pi, *other;
	struct perfinject_code code;
	int seen[2] = { 0, 0 }, n;
	char path[256], line[128];
	FILE *f;

	PERFINJECT_OPTS(o, .flags = PERFINJECT_F_NO_REGISTRY |
				    PERFINJECT_F_NO_ENV | PERFINJECT_F_STRICT,
			.backends = PERFINJECT_BACKEND_PERFMAP,
			.dir = t_tmpdir());
	PERFINJECT_OPTS(both, .flags = PERFINJECT_F_NO_REGISTRY |
				       PERFINJECT_F_REGISTRY_ONLY);

	errno = 0;
	CHECK(!perfinject__new(&both) && errno == EINVAL,
	      "no registry and registry only");
	pi = perfinject__new(&o);
	CHECK(pi, "no registry: new: %s", strerror(errno));
	if (!pi)
		return;
	other = perfinject__new(&(struct perfinject_opts){
		.sz = sizeof(struct perfinject_opts),
		.flags = PERFINJECT_F_REGISTRY_ONLY });
	CHECK(other, "registry only: new: %s", strerror(errno));
	CHECK_EQ(perfinject__load(pi, "hidden0", (uintptr_t)c[0], 16, 0), 0);
	CHECK_EQ(perfinject__load(pi, "hidden1", (uintptr_t)c[1], 16, 7), 0);
	CHECK_EQ(perfinject__move(pi, (uintptr_t)c[1], (uintptr_t)c[2]), 0);
	CHECK_EQ(perfinject__unload(pi, (uintptr_t)c[0]), 0);
	CHECK_EQ(perfinject__load(pi, "hidden3", (uintptr_t)c[0], 8, 0), 0);
	CHECK_EQ(perfinject__count(pi), 2);
	CHECK_EQ(perfinject__find(pi, (uintptr_t)c[2], &code, NULL, 0), 0);
	CHECK_EQ(code.code_index, 7);
	if (other)
		CHECK_EQ(perfinject__load(other, "shown", (uintptr_t)c[3], 16,
					  0), 0);
	n = perfinject_registry__read_pid(getpid(), 0, hidden_seen, seen);
	CHECK(n >= 1 && seen[0] == 0 && seen[1] == 1,
	      "registry: %d entries, %d hidden, %d shown", n, seen[0],
	      seen[1]);
	perfinject__free(pi);
	perfinject__free(other);

	/* Its files have every load. */
	snprintf(path, sizeof(path), "%s/perf-%d.map", t_tmpdir(), getpid());
	f = fopen(path, "r");
	CHECK(f, "%s: %s", path, strerror(errno));
	for (n = 0; f && fgets(line, sizeof(line), f);)
		n += !!strstr(line, " hidden");
	if (f)
		fclose(f);
	CHECK(n >= 3, "perf-map: %d lines of the hidden handle", n);
}

int main(void)
{
	struct perfinject_frame f[2] = {
		{ .file = "inner.js", .line = 7, .function = "inner" },
		{ .file = "outer.js", .line = 40 },
	};
	struct perfinject_line rows[2] = {
		{ .addr = (uintptr_t)code[4], .frames = f, .nr_frames = 2 },
		{ .addr = (uintptr_t)code[4] + 16, .frames = &f[1],
		  .nr_frames = 1 },
	};
	struct perfinject_code_op op[2];
	struct perfinject *pi;
	char path[256];
	int i;

	PERFINJECT_OPTS(opts, .flags = PERFINJECT_F_NO_ENV |
				       PERFINJECT_F_STRICT,
			.backends = PERFINJECT_BACKEND_PERFMAP |
				    PERFINJECT_BACKEND_JITDUMP,
			.dir = t_tmpdir());
	PERFINJECT_LOAD_OPTS(lo, .lines = rows, .nr_lines = 2,
			     .eh_frame = "EH_FRAME_24_BYTES_OF_CFI",
			     .eh_frame_sz = 24, .eh_frame_hdr = "EH_HDR_8",
			     .eh_frame_hdr_sz = 8);

	/* Registry only: whatever the environment says. */
	{
		PERFINJECT_OPTS(ro, .flags = PERFINJECT_F_REGISTRY_ONLY,
				.dir = t_tmpdir());

		setenv("PERFINJECT_BACKENDS", "perfmap", 1);
		pi = perfinject__new(&ro);
		CHECK(pi && perfinject__backends(pi) == 0,
		      "registry only: backends %#x",
		      pi ? perfinject__backends(pi) : 0);
		CHECK(pi && perfinject__load(pi, "r", (uintptr_t)code[0], 8,
					     0) == 0 &&
		      perfinject__count(pi) == 1, "registry only: load");
		perfinject__free(pi);
		unsetenv("PERFINJECT_BACKENDS");
		ro.backends = PERFINJECT_BACKEND_PERFMAP;
		errno = 0;
		CHECK(!perfinject__new(&ro) && errno == EINVAL,
		      "registry only with backends");
	}

	check_no_registry();

	pi = perfinject__new(&opts);
	CHECK(pi, "new: %s", strerror(errno));
	if (!pi)
		return t_done();
	check_options(pi);

	/* Through a batch: the op's opts; then a plain load after it. */
	memset(op, 0, sizeof(op));
	op[0].op = op[1].op = PERFINJECT_OP_LOAD;
	op[0].addr = (uintptr_t)code[4];
	op[0].len = op[1].len = 64;
	op[0].name = "with_info";
	op[0].opts = &lo;
	op[1].addr = (uintptr_t)code[5];
	op[1].name = "plain";
	CHECK_EQ(perfinject__batch(pi, op, 2), 2);

	/* Everything in code[0..5] but code[4..5]'s range: 4 entries. */
	CHECK_EQ(perfinject__count(pi), 6);
	CHECK_EQ(perfinject__unload_range(pi, (uintptr_t)code[0],
					  (uintptr_t)code[4] -
					  (uintptr_t)code[0]), 4);
	CHECK_EQ(perfinject__count(pi), 2);
	CHECK_EQ(perfinject__unload_range(pi, (uintptr_t)code[0], 64), 0);
	CHECK_EQ(perfinject__unload_range(pi, 1, 0), -EINVAL);
	CHECK_EQ(perfinject__unload_range(pi, UINT64_MAX, 2), -EINVAL);
	CHECK_EQ(perfinject__unload_range(pi, 0, UINT64_MAX), 2);
	CHECK_EQ(perfinject__count(pi), 0);
	perfinject__free(pi);

	snprintf(path, sizeof(path), "%s/jit-%d.dump", t_tmpdir(), getpid());
	check_jitdump(path);
	snprintf(path, sizeof(path), "%s/perf-%d.map", t_tmpdir(), getpid());
	{
		size_t len;
		char *map = t_slurp(path, &len), line[64];

		snprintf(line, sizeof(line), "%llx 40 hello\n",
			 (unsigned long long)(uintptr_t)code[0]);
		CHECK(map && strstr(map, line), "perf-map: %s",
		      map ? map : "(none)");
		for (i = 0; map && i < (int)len; i++)
			CHECK(map[i], "a NUL in the perf-map");
		free(map);
	}
	return t_done();
}
