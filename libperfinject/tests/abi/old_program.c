// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A program built against libperfinject 0.1 (perfinject-0.1.h), run with
 * the library of this tree: every call and layout of 0.1 still works.
 * perfinject__batch() gets 0.1's struct perfinject_code_op, without the
 * opts field: bound to the wrong version, the library would read the
 * second operation from the middle of the first.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "perfinject-0.1.h"

static int failures;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__,	\
				__LINE__, #cond);			\
			failures++;					\
		}							\
	} while (0)

int main(void)
{
	static unsigned char code[4][32];
	struct perfinject_code_op ops[3];
	struct perfinject_code found;
	struct perfinject *pi;
	char name[32];

	PERFINJECT_OPTS(opts, .flags = PERFINJECT_F_NO_ENV);

	CHECK(sizeof(ops[0]) == 48);
	CHECK(perfinject_check_version(0, 1));
	pi = perfinject__new(&opts);
	CHECK(pi);
	if (!pi)
		return 1;
	CHECK(perfinject__load(pi, "single", (uintptr_t)code[0], 32, 0) == 0);

	memset(ops, 0, sizeof(ops));
	ops[0] = (struct perfinject_code_op){ .op = PERFINJECT_OP_LOAD,
		.addr = (uintptr_t)code[1], .len = 32, .code_index = 7,
		.name = "batch_a" };
	ops[1] = (struct perfinject_code_op){ .op = PERFINJECT_OP_LOAD,
		.addr = (uintptr_t)code[2], .len = 16, .name = "batch_b" };
	ops[2] = (struct perfinject_code_op){ .op = PERFINJECT_OP_MOVE,
		.addr = (uintptr_t)code[1], .new_addr = (uintptr_t)code[3] };
	CHECK(perfinject__batch(pi, ops, 3) == 3);
	CHECK(perfinject__count(pi) == 3);
	CHECK(perfinject__find(pi, (uintptr_t)code[3], &found, name,
			       sizeof(name)) == 0 &&
	      !strcmp(name, "batch_a") && found.code_index == 7 &&
	      found.len == 32);
	CHECK(perfinject__find(pi, (uintptr_t)code[2], &found, name,
			       sizeof(name)) == 0 &&
	      !strcmp(name, "batch_b") && found.len == 16);
	CHECK(perfinject__unload_index(pi, 7) == 0);
	CHECK(perfinject__unload(pi, (uintptr_t)code[2]) == 0);
	CHECK(perfinject__count(pi) == 1);
	perfinject__free(pi);
	if (failures)
		return 1;
	printf("a program built against 0.1 works with %d.%d\n",
	       perfinject_version_major(), perfinject_version_minor());
	return 0;
}
