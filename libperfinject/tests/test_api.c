// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Every API call: success and error paths. */
#include <limits.h>
#include <stdint.h>
#include <unistd.h>

#include "helpers.h"

static int count_cb(const struct perfinject_code *code, void *ctx)
{
	(void)code;
	(*(int *)ctx)++;
	return 0;
}

static void test_version(void)
{
	CHECK_EQ(perfinject_version_major(), PERFINJECT_MAJOR_VERSION);
	CHECK_EQ(perfinject_version_minor(), PERFINJECT_MINOR_VERSION);
	CHECK(perfinject_check_version(0, 0), "0.0");
	CHECK(perfinject_check_version(PERFINJECT_MAJOR_VERSION,
				       PERFINJECT_MINOR_VERSION), "own");
	CHECK(!perfinject_check_version(PERFINJECT_MAJOR_VERSION,
					PERFINJECT_MINOR_VERSION + 1), "newer");
	CHECK(!perfinject_check_version(PERFINJECT_MAJOR_VERSION + 1, 0),
	      "major");
	CHECK(PERFINJECT_CHECK_VERSION(0, 1), "macro");
}

static void test_opts(void)
{
	struct {
		struct perfinject_opts opts;
		char tail[16];
	} big;
	struct perfinject *pi;

	PERFINJECT_OPTS(opts, .flags = PERFINJECT_F_NO_ENV);
	CHECK_EQ(opts.sz, sizeof(opts));

	/* Too small. */
	opts.sz = sizeof(size_t);
	errno = 0;
	CHECK(!perfinject__new(&opts), "small sz accepted");
	CHECK_EQ(errno, EINVAL);
	opts.sz = 0;
	CHECK(!perfinject__new(&opts), "zero sz accepted");
	CHECK_EQ(errno, EINVAL);

	/* Larger with zero tail: fine; non-zero tail: EINVAL. */
	memset(&big, 0, sizeof(big));
	big.opts.sz = sizeof(big);
	big.opts.flags = PERFINJECT_F_NO_ENV;
	pi = perfinject__new(&big.opts);
	CHECK(pi, "zero tail refused: %s", strerror(errno));
	perfinject__free(pi);
	big.tail[7] = 1;
	errno = 0;
	CHECK(!perfinject__new(&big.opts), "non-zero tail accepted");
	CHECK_EQ(errno, EINVAL);

	/* Unknown flags, unknown backends, empty dir. */
	opts.sz = sizeof(opts);
	opts.flags = 1U << 30;
	CHECK(!perfinject__new(&opts) && errno == EINVAL, "bad flags");
	opts.flags = PERFINJECT_F_NO_ENV;
	opts.backends = 1U << 20;
	CHECK(!perfinject__new(&opts) && errno == EINVAL, "bad backends");
	opts.backends = PERFINJECT_BACKEND_PERFMAP;
	opts.dir = "";
	CHECK(!perfinject__new(&opts) && errno == EINVAL, "empty dir");

	/* A directory that does not exist: dropped, or an error if strict. */
	opts.dir = "/nonexistent/perfinject";
	pi = perfinject__new(&opts);
	CHECK(pi && perfinject__backends(pi) == 0, "missing dir not dropped");
	perfinject__free(pi);
	opts.flags |= PERFINJECT_F_STRICT;
	CHECK(!perfinject__new(&opts) && errno == ENOENT, "strict: %d", errno);

	/* NULL opts: the defaults. */
	pi = perfinject__new(NULL);
	CHECK(pi, "NULL opts: %s", strerror(errno));
	perfinject__free(pi);
	perfinject__free(NULL);
}

static void test_ops(unsigned int backends)
{
	static char code[4][64] = { { 0xc3 }, { 0xc3 }, { 0xc3 }, { 0xc3 } };
	uint64_t a = (uintptr_t)code[0], b = (uintptr_t)code[1];
	char longname[PERFINJECT_NAME_MAX + 1];
	struct perfinject_code c;
	struct perfinject *pi;
	char name[8];
	int n = 0;

	PERFINJECT_OPTS(opts, .backends = backends, .dir = t_tmpdir(),
			.flags = PERFINJECT_F_NO_ENV | PERFINJECT_F_STRICT);
	pi = perfinject__new(&opts);
	CHECK(pi, "new(%#x): %s", backends, strerror(errno));
	if (!pi)
		return;
	CHECK_EQ(perfinject__backends(pi), backends);

	/* NULL handle. */
	errno = 0;
	CHECK_EQ(perfinject__load(NULL, "f", a, 1, 0), -EINVAL);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(perfinject__unload(NULL, a), -EINVAL);
	CHECK_EQ(perfinject__unload_index(NULL, 1), -EINVAL);
	CHECK_EQ(perfinject__move(NULL, a, b), -EINVAL);
	CHECK_EQ(perfinject__batch(NULL, NULL, 0), -EINVAL);
	CHECK_EQ(perfinject__rundown(NULL), -EINVAL);
	CHECK_EQ(perfinject__find(NULL, a, &c, NULL, 0), -EINVAL);
	CHECK_EQ(perfinject__backends(NULL), 0);
	CHECK_EQ(perfinject__count(NULL), 0);

	/* Load: bad arguments. */
	CHECK_EQ(perfinject__load(pi, NULL, a, 1, 0), -EINVAL);
	CHECK_EQ(perfinject__load(pi, "", a, 1, 0), -EINVAL);
	CHECK_EQ(perfinject__load(pi, "f", a, 0, 0), -EINVAL);
	CHECK_EQ(perfinject__load(pi, "f", UINT64_MAX - 4, 16, 0), -EINVAL);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK_EQ(perfinject__load(pi, longname, a, 1, 0), -ENAMETOOLONG);
	longname[PERFINJECT_NAME_MAX - 1] = '\0'; /* 4095 chars: the limit */
	CHECK_EQ(perfinject__load(pi, longname, a, 16, 0), 0);
	CHECK_EQ(perfinject__unload(pi, a), 0);
	CHECK_EQ(perfinject__count(pi), 0);

	/* Load, duplicates. */
	CHECK_EQ(perfinject__load(pi, "alpha", a, 16, 7), 0);
	errno = 0;
	CHECK_EQ(perfinject__load(pi, "again", a, 8, 0), -EEXIST);
	CHECK_EQ(errno, EEXIST);
	CHECK_EQ(perfinject__load(pi, "dupidx", b, 8, 7), -EEXIST);
	CHECK_EQ(perfinject__count(pi), 1);

	/* Find. */
	CHECK_EQ(perfinject__find(pi, a, NULL, NULL, 0), -EINVAL);
	CHECK_EQ(perfinject__find(pi, a, &c, name, 0), -EINVAL);
	CHECK_EQ(perfinject__find(pi, a + 1, &c, NULL, 0), -ENOENT);
	CHECK_EQ(perfinject__find(pi, a, &c, name, sizeof(name)), 0);
	CHECK(c.addr == a && c.len == 16 && c.code_index == 7 &&
	      c.name == name && !strcmp(name, "alpha"), "find: %s", name);
	CHECK_EQ(perfinject__find(pi, a, &c, name, 3), 0);
	CHECK(!strcmp(name, "al"), "truncated: %s", name);
	CHECK_EQ(perfinject__find(pi, a, &c, NULL, 0), 0);
	CHECK(c.name == NULL, "name without buffer");

	/* Move. */
	CHECK_EQ(perfinject__move(pi, a, a), -EINVAL);
	CHECK_EQ(perfinject__move(pi, b, a), -ENOENT);
	CHECK_EQ(perfinject__move(pi, a, UINT64_MAX - 8), -EINVAL);
	CHECK_EQ(perfinject__load(pi, "beta", b, 8, 0), 0);
	CHECK_EQ(perfinject__move(pi, a, b), -EEXIST);
	CHECK_EQ(perfinject__unload(pi, b), 0);
	CHECK_EQ(perfinject__move(pi, a, b), 0);
	CHECK_EQ(perfinject__find(pi, a, &c, NULL, 0), -ENOENT);
	CHECK_EQ(perfinject__find(pi, b, &c, name, sizeof(name)), 0);
	CHECK(c.len == 16 && c.code_index == 7 && !strcmp(name, "alpha"),
	      "moved entry");

	/* Unload. */
	CHECK_EQ(perfinject__unload(pi, a), -ENOENT);
	CHECK_EQ(perfinject__unload_index(pi, 0), -EINVAL);
	CHECK_EQ(perfinject__unload_index(pi, 8), -ENOENT);
	CHECK_EQ(perfinject__unload_index(pi, 7), 0);
	CHECK_EQ(perfinject__unload_index(pi, 7), -ENOENT);
	CHECK_EQ(perfinject__unload(pi, b), -ENOENT);
	CHECK_EQ(perfinject__count(pi), 0);

	/* Batch: dependencies inside one call, write()-like results. */
	{
		struct perfinject_code_op ops[] = {
			{ .op = PERFINJECT_OP_LOAD, .addr = a, .len = 4,
			  .code_index = 1, .name = "one" },
			{ .op = PERFINJECT_OP_MOVE, .addr = a, .new_addr = b },
			{ .op = PERFINJECT_OP_LOAD, .addr = a, .len = 4,
			  .code_index = 2, .name = "two" },
			{ .op = PERFINJECT_OP_UNLOAD_INDEX, .code_index = 1 },
			{ .op = PERFINJECT_OP_UNLOAD, .addr = b }, /* gone */
		};
		struct perfinject_code_op bad = { .op = 99 };

		CHECK_EQ(perfinject__batch(pi, NULL, 1), -EINVAL);
		CHECK_EQ(perfinject__batch(pi, ops, 0), 0);
		CHECK_EQ(perfinject__batch(pi, ops, (size_t)INT_MAX + 1),
			 -E2BIG);
		CHECK_EQ(perfinject__batch(pi, &bad, 1), -EINVAL);
		bad = ops[0];
		bad.flags = 1;
		CHECK_EQ(perfinject__batch(pi, &bad, 1), -EINVAL);
		CHECK_EQ(perfinject__batch(pi, ops, 5), 4);
		CHECK_EQ(perfinject__count(pi), 1);
		CHECK_EQ(perfinject__find(pi, a, &c, name, sizeof(name)), 0);
		CHECK(!strcmp(name, "two") && c.code_index == 2, "batch");
		CHECK_EQ(perfinject__batch(pi, ops + 4, 1), -ENOENT);
	}

	/* Rundown and the registry reader on ourselves. */
	CHECK_EQ(perfinject__rundown(pi), 1);
	n = 0;
	CHECK(perfinject_registry__read_pid(getpid(), 0, count_cb, &n) >= 1,
	      "read_pid: %s", strerror(errno));
	CHECK(n >= 1, "reader saw %d", n);
	CHECK_EQ(perfinject_registry__read_pid(0, 0, count_cb, &n), -EINVAL);
	CHECK_EQ(perfinject_registry__read_pid(getpid(), 0, NULL, NULL),
		 -EINVAL);
	CHECK_EQ(perfinject_registry__find_pid(getpid(), NULL), -EINVAL);

	perfinject__free(pi);
}

static void test_batch_big(void)
{
	enum { N = 5000 };
	static struct perfinject_code_op ops[2 * N];
	struct perfinject *pi;
	int i;

	PERFINJECT_OPTS(opts, .flags = PERFINJECT_F_NO_ENV,
			.backends = PERFINJECT_BACKEND_PERFMAP,
			.dir = t_tmpdir());
	pi = perfinject__new(&opts);
	CHECK(pi, "new: %s", strerror(errno));
	if (!pi)
		return;
	/* More than one kernel chunk: loads, then moves of all of them. */
	for (i = 0; i < N; i++) {
		ops[i] = (struct perfinject_code_op){
			.op = PERFINJECT_OP_LOAD, .addr = 0x100000 + i * 16,
			.len = 16, .code_index = i + 1, .name = "m",
		};
		ops[N + i] = (struct perfinject_code_op){
			.op = PERFINJECT_OP_MOVE, .addr = 0x100000 + i * 16,
			.new_addr = 0x900000 + i * 16,
		};
	}
	CHECK_EQ(perfinject__batch(pi, ops, 2 * N), 2 * N);
	CHECK_EQ(perfinject__count(pi), N);
	CHECK_EQ(perfinject__rundown(pi), N);
	perfinject__free(pi);
}

int main(void)
{
	test_version();
	test_opts();
	test_ops(0);
	test_ops(PERFINJECT_BACKEND_PERFMAP);
	test_ops(PERFINJECT_BACKEND_PERFMAP | PERFINJECT_BACKEND_JITDUMP);
	test_batch_big();
	return t_done();
}
