/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __PERFINJECT_TESTS_HELPERS_H
#define __PERFINJECT_TESTS_HELPERS_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

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
 * Fork a child that runs @fn(fd), which writes a byte to fd once it is
 * ready and never returns; wait for that byte. The child's pid, or -1
 * (the child did not start; it has been reaped). The child is killed
 * when the test dies.
 */
pid_t t_start_child(void (*fn)(int ready_fd));

/* Fields of a file in native byte order, at any alignment. */
static inline uint32_t t_rd32(const char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t t_rd64(const char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* jitdump record ids the tests look for. */
#define T_JIT_CODE_LOAD		0
#define T_JIT_CODE_MOVE		1
#define T_JIT_CODE_DEBUG_INFO	2
#define T_JIT_CODE_CLOSE	3
#define T_JIT_CODE_UNWINDING_INFO 4

/*
 * Count the records of the jitdump at @path with id @id (all: -1);
 * -1 if the file cannot be read or is not a jitdump. *@last gets the id
 * of the last record, when @last is not NULL.
 */
int t_jitdump_count(const char *path, int id, int *last);
/*
 * Open a software dummy event on the calling thread with attr.jit_code
 * set (sample_id_all, TID and TIME); the fd or -1 with errno set.
 */
int t_open_jit_code_event(void);
/* The same for another process (per task, any CPU, no buffer). */
int t_open_jit_code_event_pid(pid_t pid);
/* ... with more of the attr flags word: PERFINJECT_ATTR_FLAG_JIT_CODE_*. */
int t_open_jit_code_event_flags(pid_t pid, uint64_t flags);

#endif
