// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fork() costs what it costs without the library: fork + waitpid of a
 * child that exits at once, in a process that never used the library
 * (this program run again with "plain", so that no fork handler of the
 * library is installed) and in this one, with a handle holding 1,000
 * entries and after perfinject__free(). Rounds alternate between the
 * two processes; the median ratio must stay within 1.5.
 */
#include <spawn.h>
#include <stdint.h>
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

/* Median nanoseconds of one fork + waitpid. */
static uint64_t fork_cost(void)
{
	uint64_t t[FORKS], t0;
	pid_t pid;
	int i, status;

	for (i = 0; i < FORKS; i++) {
		t0 = now_ns();
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			return 0;
		t[i] = now_ns() - t0;
	}
	qsort(t, FORKS, sizeof(t[0]), cmp_u64);
	return t[FORKS / 2];
}

/* The same in a fresh process that never touches the library. */
static uint64_t plain_fork_cost(const char *self)
{
	char *argv[] = { (char *)self, "plain", NULL };
	int fds[2], status;
	uint64_t cost = 0;
	pid_t pid;
	FILE *f;

	if (pipe(fds))
		return 0;
	posix_spawn_file_actions_t fa;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	if (posix_spawn(&pid, self, &fa, NULL, argv, environ))
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (f && fscanf(f, "%lu", (unsigned long *)&cost) != 1)
		cost = 0;
	if (f)
		fclose(f);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return cost;
}

int main(int argc, char **argv)
{
	static unsigned char code[1000][16];
	double with[ROUNDS], after[ROUNDS];
	struct perfinject *pi;
	uint64_t plain;
	int r, i;

	if (argc > 1 && !strcmp(argv[1], "plain")) {
		/* About the memory the library's process has: fair to fork. */
		static void *blocks[2000];

		for (i = 0; i < 2000; i++)
			blocks[i] = malloc(64);
		memset(code, 1, sizeof(code));
		blocks[0] = realloc(blocks[0], 64 << 10);
		printf("%lu\n", (unsigned long)fork_cost());
		return 0;
	}

	PERFINJECT_OPTS(opts, .flags = PERFINJECT_F_NO_ENV,
			.backends = PERFINJECT_BACKEND_PERFMAP,
			.dir = t_tmpdir());
	for (r = 0; r < ROUNDS; r++) {
		pi = perfinject__new(&opts);
		CHECK(pi, "new: %s", strerror(errno));
		if (!pi)
			return t_done();
		for (i = 0; i < 1000; i++) {
			char name[32];

			snprintf(name, sizeof(name), "fn_%d", i);
			CHECK_EQ(perfinject__load(pi, name, (uintptr_t)code[i],
						  16, 0), 0);
		}
		plain = plain_fork_cost(argv[0]);
		CHECK(plain, "the plain run failed");
		if (!plain)
			return t_done();
		with[r] = (double)fork_cost() / plain;
		perfinject__free(pi);
		after[r] = (double)fork_cost() / plain;
		fprintf(stderr, "round %d: plain %lu ns, with %.2fx, after free %.2fx\n",
			r, (unsigned long)plain, with[r], after[r]);
	}
	for (r = 1; r < ROUNDS; r++)
		for (i = r; i > 0 && with[i] < with[i - 1]; i--) {
			double t = with[i];

			with[i] = with[i - 1];
			with[i - 1] = t;
		}
	for (r = 1; r < ROUNDS; r++)
		for (i = r; i > 0 && after[i] < after[i - 1]; i--) {
			double t = after[i];

			after[i] = after[i - 1];
			after[i - 1] = t;
		}
	printf("fork with the library: median %.2fx, after free %.2fx (limit 1.5x)\n",
	       with[ROUNDS / 2], after[ROUNDS / 2]);
	CHECK(with[ROUNDS / 2] <= 1.5, "fork with a handle: %.2fx",
	      with[ROUNDS / 2]);
	CHECK(after[ROUNDS / 2] <= 1.5, "fork after free: %.2fx",
	      after[ROUNDS / 2]);
	return t_done();
}
