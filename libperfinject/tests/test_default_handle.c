// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * perfinject__default(): every caller gets the same handle, which lives
 * until the last reference is given back with perfinject__free(); then
 * the next call makes a new one. Two threads take and give back
 * references at once while a third keeps using its own.
 */
#include <pthread.h>
#include <stdint.h>

#include "helpers.h"

static unsigned char code[4][16];

static void *churn(void *arg)
{
	struct perfinject *want = arg, *pi;
	int i;

	for (i = 0; i < 10000; i++) {
		pi = perfinject__default();
		if (pi != want)
			return (void *)1;
		perfinject__free(pi);
	}
	return NULL;
}

int main(void)
{
	struct perfinject *a, *b, *c;
	struct perfinject_code found;
	pthread_t t[2];
	void *ret;
	int i;

	unsetenv("PERFINJECT_BACKENDS");
	a = perfinject__default();
	CHECK(a, "default: %s", strerror(errno));
	if (!a)
		return t_done();
	b = perfinject__default();
	CHECK(a == b, "two default handles");
	CHECK_EQ(perfinject__load(a, "shared", (uintptr_t)code[0], 16, 0), 0);
	CHECK_EQ(perfinject__find(b, (uintptr_t)code[0], &found, NULL, 0), 0);

	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, churn, a);
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], &ret);
		CHECK(!ret, "thread %d got another handle", i);
	}

	/* One reference given back: the handle lives on for the other. */
	perfinject__free(a);
	CHECK_EQ(perfinject__load(b, "after", (uintptr_t)code[1], 16, 0), 0);
	CHECK_EQ(perfinject__count(b), 2);
	perfinject__free(b);

	/* The last one went: a new handle, with nothing live. */
	c = perfinject__default();
	CHECK(c, "default again: %s", strerror(errno));
	if (c) {
		CHECK_EQ(perfinject__count(c), 0);
		perfinject__free(c);
	}
	return t_done();
}
