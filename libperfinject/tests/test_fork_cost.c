// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fork() costs what it costs without the library: what fork() adds to the
 * raw system call, which runs no pthread_atfork() handler, in this
 * process, with a handle holding 1,000 entries and after
 * perfinject__free(), against what it adds in a process that never used
 * the library (this program run again with "plain", so that no fork
 * handler of the library is installed).
 *
 * Within a process the two kinds of fork alternate one by one, the order
 * swapped every pair, so that whatever else the machine runs weighs on
 * both alike: fork() over raw is the ratio of their medians. Per round
 * this process's ratio is divided by the plain one's; the median of the
 * rounds must stay within 1.5.
 */
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define FORKS	100
#define ROUNDS	7

extern char **environ;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* fork() without glibc's wrapper: no atfork handler runs. */
static pid_t raw_fork(void)
{
#ifdef SYS_fork
	return syscall(SYS_fork);
#else
	return syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
}

/* Nanoseconds of one fork + waitpid, 0 if it failed. */
static uint64_t one_fork(int raw)
{
	uint64_t t0 = now_ns();
	pid_t pid;
	int status;

	pid = raw ? raw_fork() : fork();
	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 0;
	return now_ns() - t0;
}

/*
 * FORKS forks through fork() and as many through the raw system call, in
 * turn: the ratio of their medians, or 0 if a fork failed.
 */
static double fork_ratio(uint64_t *raw_ns)
{
	uint64_t lib[FORKS], raw[FORKS];
	int i;

	for (i = 0; i < FORKS; i++) {
		if (i & 1) {
			lib[i] = one_fork(0);
			raw[i] = one_fork(1);
		} else {
			raw[i] = one_fork(1);
			lib[i] = one_fork(0);
		}
		if (!lib[i] || !raw[i])
			return 0;
	}
	qsort(lib, FORKS, sizeof(lib[0]), cmp_u64);
	qsort(raw, FORKS, sizeof(raw[0]), cmp_u64);
	*raw_ns = raw[FORKS / 2];
	return (double)lib[FORKS / 2] / raw[FORKS / 2];
}

/* fork() over raw in a fresh process that never touches the library. */
static double plain_ratio(const char *self)
{
	char *argv[] = { (char *)self, "plain", NULL };
	posix_spawn_file_actions_t fa;
	double ratio = 0;
	int fds[2], status;
	pid_t pid;
	FILE *f;

	if (pipe(fds))
		return 0;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	if (posix_spawn(&pid, self, &fa, NULL, argv, environ))
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (f && fscanf(f, "%lf", &ratio) != 1)
		ratio = 0;
	if (f)
		fclose(f);
	else
		close(fds[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return ratio;
}

int main(int argc, char **argv)
{
	static unsigned char code[1000][16];
	double with[ROUNDS], after[ROUNDS], plain, mine;
	struct perfinject *pi;
	uint64_t raw_ns;
	int r, i;

	if (argc > 1 && !strcmp(argv[1], "plain")) {
		/* About the memory the library's process has: fair to fork. */
		static void *blocks[2000];

		for (i = 0; i < 2000; i++)
			blocks[i] = malloc(64);
		memset(code, 1, sizeof(code));
		blocks[0] = realloc(blocks[0], 64 << 10);
		printf("%f\n", fork_ratio(&raw_ns));
		return 0;
	}

	PERFINJECT_OPTS(opts, .flags = PERFINJECT_F_NO_ENV,
			.backends = PERFINJECT_BACKEND_PERFMAP,
			.dir = t_tmpdir());
	for (r = 0; r < ROUNDS; r++) {
		pi = perfinject__new(&opts);
		CHECK(pi, "new: %s", strerror(errno));
		if (!pi)
			break;
		for (i = 0; i < 1000; i++) {
			char name[32];

			snprintf(name, sizeof(name), "fn_%d", i);
			CHECK_EQ(perfinject__load(pi, name, (uintptr_t)code[i],
						  16, 0), 0);
		}
		plain = plain_ratio(argv[0]);
		mine = fork_ratio(&raw_ns);
		CHECK(plain > 0 && mine > 0,
		      "round %d: a fork, or the plain process, failed", r);
		if (plain <= 0 || mine <= 0)
			break;
		with[r] = mine / plain;
		perfinject__free(pi);
		mine = fork_ratio(&raw_ns);
		CHECK(mine > 0, "round %d: a fork failed", r);
		if (mine <= 0)
			break;
		after[r] = mine / plain;
		fprintf(stderr, "round %d: raw fork %lu ns, fork() over raw %.2fx without the library; with a handle %.2fx that, after free %.2fx\n",
			r, (unsigned long)raw_ns, plain, with[r], after[r]);
	}
	if (r < ROUNDS)
		return t_done();
	qsort(with, ROUNDS, sizeof(with[0]), cmp_double);
	qsort(after, ROUNDS, sizeof(after[0]), cmp_double);
	printf("fork() with the library: with a handle median %.2fx, after free %.2fx its cost without (limit 1.5x)\n",
	       with[ROUNDS / 2], after[ROUNDS / 2]);
	CHECK(with[ROUNDS / 2] <= 1.5, "fork with a handle: %.2fx",
	      with[ROUNDS / 2]);
	CHECK(after[ROUNDS / 2] <= 1.5, "fork after free: %.2fx",
	      after[ROUNDS / 2]);
	return t_done();
}
