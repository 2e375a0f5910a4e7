// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * After fork() the child is a new process to perf: its first call opens
 * perf-CHILD.map and jit-CHILD.dump, writes the code it inherited into
 * them, and never writes into the parent's files.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

static unsigned char code[2][64] = { { 0x90, 0xc3 }, { 0x90, 0x90, 0xc3 } };

static int child(struct perfinject *pi)
{
	char path[256], *text;
	size_t len;

	/* The registry came along: the code did too. */
	CHECK_EQ(perfinject__count(pi), 1);
	CHECK_EQ(perfinject__load(pi, "child_fn", (uintptr_t)code[1], 3, 2), 0);
	CHECK_EQ(perfinject__backends(pi), PERFINJECT_BACKEND_PERFMAP |
					   PERFINJECT_BACKEND_JITDUMP);
	snprintf(path, sizeof(path), "%s/perf-%d.map", t_tmpdir(), getpid());
	text = t_slurp(path, &len);
	CHECK(text && strstr(text, " 2 parent_fn\n") &&
	      strstr(text, " 3 child_fn\n"), "child map: %s", text);
	free(text);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", t_tmpdir(), getpid());
	CHECK(access(path, F_OK) == 0, "no child jitdump");
	perfinject__free(pi);
	return t_done();
}

int main(void)
{
	char path[256], *text;
	struct perfinject *pi;
	int status;
	size_t len;
	pid_t pid;

	PERFINJECT_OPTS(opts, .dir = t_tmpdir(), .flags = PERFINJECT_F_STRICT,
			.backends = PERFINJECT_BACKEND_PERFMAP |
				    PERFINJECT_BACKEND_JITDUMP);
	pi = perfinject__new(&opts);
	if (!pi)
		return T_FAIL;
	CHECK_EQ(perfinject__load(pi, "parent_fn", (uintptr_t)code[0], 2, 1), 0);

	pid = fork();
	if (pid < 0)
		return T_FAIL;
	if (!pid)
		_exit(child(pi));
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "child status %#x", status);

	/* The parent's files hold only the parent's code. */
	CHECK_EQ(perfinject__load(pi, "parent_2", (uintptr_t)code[1], 3, 3), 0);
	snprintf(path, sizeof(path), "%s/perf-%d.map", t_tmpdir(), getpid());
	text = t_slurp(path, &len);
	CHECK(text && !strstr(text, "child_fn") && strstr(text, "parent_2"),
	      "parent map: %s", text);
	free(text);
	perfinject__free(pi);
	snprintf(path, sizeof(path), "%s/perf-%d.map", t_tmpdir(), pid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", t_tmpdir(), pid);
	unlink(path);
	return t_done();
}
