// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * perfinject__enable() and perfinject__disable(): a handle that starts
 * with no backend gets a perf map at run time, which starts with a line
 * for each entry live then; a jitdump enabled later gets a LOAD for each
 * entry live then, and the perf map no second line; after the perf map is
 * disabled, loads reach the jitdump only; bad arguments are refused.
 */
#include <stdint.h>
#include <unistd.h>

#include "helpers.h"

static unsigned char code[8][32];

/* Lines of the perf map naming "fn". */
static int perfmap_lines(const char *path)
{
	size_t len;
	char *buf = t_slurp(path, &len), *p;
	int n = 0;

	if (!buf)
		return -1;
	for (p = buf; (p = strstr(p, " fn")); p++)
		n++;
	free(buf);
	return n;
}

int main(void)
{
	char map[512], dump[512];
	struct perfinject *pi;
	int last, err;

	PERFINJECT_OPTS(opts, .flags = PERFINJECT_F_REGISTRY_ONLY,
			.dir = t_tmpdir());

	snprintf(map, sizeof(map), "%s/perf-%d.map", t_tmpdir(), getpid());
	snprintf(dump, sizeof(dump), "%s/jit-%d.dump", t_tmpdir(), getpid());
	pi = perfinject__new(&opts);
	CHECK(pi, "new: %s", strerror(errno));
	if (!pi)
		return t_done();
	CHECK_EQ(perfinject__backends(pi), 0);
	CHECK_EQ(perfinject__load(pi, "fn0", (uintptr_t)code[0], 32, 0), 0);
	CHECK_EQ(perfinject__load(pi, "fn1", (uintptr_t)code[1], 32, 0), 0);
	CHECK_EQ(perfinject__load(pi, "fn2", (uintptr_t)code[2], 32, 0), 0);
	CHECK_EQ(perfinject__move(pi, (uintptr_t)code[2], (uintptr_t)code[3]),
		 0);
	CHECK_EQ(perfinject__unload(pi, (uintptr_t)code[0]), 0);
	CHECK(access(map, F_OK) != 0, "a perf map before it was enabled");

	/* The perf map: a line for each of the 2 entries live now. */
	CHECK_EQ(perfinject__enable(pi, PERFINJECT_BACKEND_PERFMAP), 0);
	CHECK_EQ(perfinject__backends(pi), PERFINJECT_BACKEND_PERFMAP);
	CHECK_EQ(perfmap_lines(map), 2);
	CHECK_EQ(perfinject__load(pi, "fn4", (uintptr_t)code[4], 32, 0), 0);
	CHECK_EQ(perfmap_lines(map), 3);

	/* The jitdump: 3 LOADs; the perf map, on already, gets nothing. */
	CHECK_EQ(perfinject__enable(pi, PERFINJECT_BACKEND_PERFMAP |
				    PERFINJECT_BACKEND_JITDUMP), 0);
	CHECK_EQ(perfinject__backends(pi), PERFINJECT_BACKEND_PERFMAP |
					   PERFINJECT_BACKEND_JITDUMP);
	CHECK_EQ(perfmap_lines(map), 3);
	CHECK_EQ(t_jitdump_count(dump, T_JIT_CODE_LOAD, NULL), 3);

	/* Perf map off: a load reaches the jitdump only. */
	CHECK_EQ(perfinject__disable(pi, PERFINJECT_BACKEND_PERFMAP), 0);
	CHECK_EQ(perfinject__backends(pi), PERFINJECT_BACKEND_JITDUMP);
	CHECK_EQ(perfinject__load(pi, "fn5", (uintptr_t)code[5], 32, 0), 0);
	CHECK_EQ(perfmap_lines(map), 3);
	CHECK_EQ(t_jitdump_count(dump, T_JIT_CODE_LOAD, NULL), 4);

	/* The kernel backend: on, or not there. */
	err = perfinject__enable(pi, PERFINJECT_BACKEND_KERNEL);
	CHECK(err == 0 || err == -EOPNOTSUPP, "enable kernel: %d", err);
	CHECK_EQ(!!(perfinject__backends(pi) & PERFINJECT_BACKEND_KERNEL),
		 err == 0);

	errno = 0;
	CHECK(perfinject__enable(pi, 0) == -EINVAL && errno == EINVAL,
	      "enable nothing");
	CHECK_EQ(perfinject__enable(pi, 1U << 7), -EINVAL);
	CHECK_EQ(perfinject__disable(pi, 1U << 7), -EINVAL);
	CHECK_EQ(perfinject__enable(NULL, PERFINJECT_BACKEND_PERFMAP),
		 -EINVAL);
	CHECK_EQ(perfinject__disable(NULL, PERFINJECT_BACKEND_PERFMAP),
		 -EINVAL);

	/* Off for good: the jitdump ends with its close record. */
	CHECK_EQ(perfinject__disable(pi, PERFINJECT_BACKEND_JITDUMP), 0);
	CHECK_EQ(t_jitdump_count(dump, -1, &last), 5);
	CHECK_EQ(last, T_JIT_CODE_CLOSE);
	CHECK_EQ(perfinject__count(pi), 4);
	perfinject__free(pi);
	return t_done();
}
