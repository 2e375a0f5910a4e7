/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __PERFINJECT_TESTS_HELPERS_H
#define __PERFINJECT_TESTS_HELPERS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfinject/perfinject.h>

#define T_PASS	0
#define T_FAIL	1
#define T_SKIP	77

extern int t_failures;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: FAIL: %s: ", __FILE__,	\
				__LINE__, #cond);			\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			t_failures++;					\
		}							\
	} while (0)

/* Equality of two integers, printing both on failure. */
#define CHECK_EQ(a, b)							\
	CHECK((long long)(a) == (long long)(b), "%lld != %lld",	\
	      (long long)(a), (long long)(b))

#define SKIP(...)							\
	do {								\
		fprintf(stderr, "SKIP: " __VA_ARGS__);			\
		fputc('\n', stderr);					\
		exit(T_SKIP);						\
	} while (0)

/* A fresh private directory for file backends; removed at exit. */
const char *t_tmpdir(void);
/* Read a whole file; NULL on error. */
char *t_slurp(const char *path, size_t *len);
int t_done(void);
/*
 * Open a software dummy event on the calling thread with attr.jit_code
 * set (sample_id_all, TID and TIME); the fd or -1 with errno set.
 */
int t_open_jit_code_event(void);
/* The same for another process (per task, any CPU, no buffer). */
int t_open_jit_code_event_pid(pid_t pid);

#endif
