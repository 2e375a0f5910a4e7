// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "../src/uapi_jit_code.h"

int t_failures;
static char t_dir[64];
static pid_t t_dir_owner;

static void t_cleanup(void)
{
	struct dirent *de;
	char path[512];
	DIR *d;

	if (!t_dir[0] || getpid() != t_dir_owner)
		return;
	d = opendir(t_dir);
	if (d) {
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", t_dir, de->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(t_dir);
}

const char *t_tmpdir(void)
{
	if (!t_dir[0]) {
		snprintf(t_dir, sizeof(t_dir), "/tmp/perfinject-test.XXXXXX");
		if (!mkdtemp(t_dir)) {
			perror("mkdtemp");
			exit(T_FAIL);
		}
		t_dir_owner = getpid();
		atexit(t_cleanup);
	}
	return t_dir;
}

char *t_slurp(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((r = read(fd, buf + n, cap - n)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			if (!buf)
				break;
		}
	}
	close(fd);
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

int t_done(void)
{
	if (t_failures) {
		fprintf(stderr, "%d check(s) failed\n", t_failures);
		return T_FAIL;
	}
	return T_PASS;
}

int t_open_jit_code_event(void)
{
	return t_open_jit_code_event_pid(0);
}

int t_open_jit_code_event_pid(pid_t pid)
{
	return t_open_jit_code_event_flags(pid, 0);
}

int t_open_jit_code_event_flags(pid_t pid, uint64_t more)
{
	size_t off = offsetof(struct perf_event_attr, read_format) +
		     sizeof(((struct perf_event_attr *)0)->read_format);
	struct perf_event_attr attr;
	uint64_t flags;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr.sample_id_all = 1;
	attr.exclude_kernel = 1;
	/* attr.jit_code: bit 40 of the flags word after read_format. */
	memcpy(&flags, (char *)&attr + off, sizeof(flags));
	flags |= PERFINJECT_ATTR_FLAG_JIT_CODE | more;
	memcpy((char *)&attr + off, &flags, sizeof(flags));
	return syscall(SYS_perf_event_open, &attr, pid, -1, -1, 0);
}

int t_jitdump_count(const char *path, int id, int *last)
{
	size_t len;
	char *buf = t_slurp(path, &len), *p, *end;
	int n = 0;

	if (!buf || len < 40 || t_rd32(buf) != 0x4A695444) {
		free(buf);
		return -1;
	}
	if (last)
		*last = -1;
	for (p = buf + t_rd32(buf + 8), end = buf + len; p + 16 <= end;
	     p += t_rd32(p + 4)) {
		if (t_rd32(p + 4) < 16 || p + t_rd32(p + 4) > end)
			break;
		n += id < 0 || t_rd32(p) == (uint32_t)id;
		if (last)
			*last = t_rd32(p);
	}
	free(buf);
	return n;
}

pid_t t_start_child(void (*fn)(int ready_fd))
{
	int fds[2], status;
	pid_t pid;
	char byte;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (!pid) {
		/*
		 * Never outlive the test: a parent killed (a timeout, a
		 * closed pipe) would leave its writers spinning.
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
			_exit(1);
		close(fds[0]);
		fn(fds[1]);
		_exit(1);
	}
	close(fds[1]);
	if (read(fds[0], &byte, 1) != 1) {
		close(fds[0]);
		waitpid(pid, &status, 0);
		fprintf(stderr, "child failed to start\n");
		return -1;
	}
	close(fds[0]);
	return pid;
}
