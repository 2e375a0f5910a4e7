// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Planted symlinks and files of other users are never written. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

static const char secret[] = "do not touch\n";

static struct perfinject *open_backend(unsigned int backend, bool strict)
{
	PERFINJECT_OPTS(opts, .backends = backend, .dir = t_tmpdir(),
			.flags = PERFINJECT_F_NO_ENV |
				 (strict ? PERFINJECT_F_STRICT : 0));
	return perfinject__new(&opts);
}

static void write_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, secret, sizeof(secret) - 1) < 0) {
		perror(path);
		exit(T_FAIL);
	}
	close(fd);
}

static void check_intact(const char *path)
{
	size_t len;
	char *text = t_slurp(path, &len);

	CHECK(text && !strcmp(text, secret), "%s was modified", path);
	free(text);
}

static void one(unsigned int backend, const char *fmt)
{
	struct timeval old_times[2] = { 0 };
	char path[256], target[256], *text;
	struct perfinject *pi;
	struct stat st;
	size_t len;

	snprintf(path, sizeof(path), fmt, t_tmpdir(), getpid());
	snprintf(target, sizeof(target), "%s/target", t_tmpdir());

	/* A symlink planted at the path: refused, target untouched. */
	write_file(target);
	CHECK(symlink(target, path) == 0, "symlink");
	errno = 0;
	pi = open_backend(backend, true);
	CHECK(!pi && errno == EEXIST, "symlink: pi %p errno %d", pi, errno);
	pi = open_backend(backend, false);
	CHECK(pi && !(perfinject__backends(pi) & backend), "non-strict");
	if (pi)
		perfinject__load(pi, "x", (uintptr_t)secret, 4, 0);
	perfinject__free(pi);
	check_intact(target);
	CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode), "link replaced");
	unlink(path);

	/* A hard link to someone's file: refused. */
	CHECK(link(target, path) == 0, "link");
	errno = 0;
	pi = open_backend(backend, true);
	CHECK(!pi && errno == EEXIST, "hard link: errno %d", errno);
	check_intact(target);
	unlink(path);
	unlink(target);

	/* A file owned by another user: refused with EPERM, as root too. */
	if (geteuid() == 0) {
		write_file(path);
		CHECK(chown(path, 65534, 65534) == 0, "chown");
		errno = 0;
		pi = open_backend(backend, true);
		CHECK(!pi && errno == EPERM, "other uid: errno %d", errno);
		check_intact(path);
		CHECK(stat(path, &st) == 0 && st.st_uid == 65534, "owner");
		unlink(path);
	}

	/*
	 * Our own stale file (pid reuse: last written before this process
	 * started): emptied and reused.
	 */
	write_file(path);
	old_times[0].tv_sec = old_times[1].tv_sec = time(NULL) - 3600;
	CHECK(utimes(path, old_times) == 0, "utimes");
	pi = open_backend(backend, true);
	CHECK(pi, "own stale file refused: %s", strerror(errno));
	perfinject__free(pi);
	text = t_slurp(path, &len);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 && text &&
	      !memmem(text, len, secret, sizeof(secret) - 1), "not emptied");
	free(text);
	unlink(path);

	/*
	 * A perf-map this process wrote (a handle freed earlier, another
	 * copy of the library): appended to, never emptied. (A jitdump
	 * needs its header for that: test_two_handles.)
	 */
	if (backend == PERFINJECT_BACKEND_PERFMAP) {
		write_file(path);
		pi = open_backend(backend, true);
		CHECK(pi, "own file refused: %s", strerror(errno));
		if (pi)
			perfinject__load(pi, "x", (uintptr_t)secret, 4, 0);
		perfinject__free(pi);
		text = t_slurp(path, &len);
		CHECK(text && len > sizeof(secret) - 1 &&
		      !memcmp(text, secret, sizeof(secret) - 1),
		      "own file emptied");
		free(text);
		unlink(path);
	}

	/* A directory in the way. */
	CHECK(mkdir(path, 0700) == 0, "mkdir");
	pi = open_backend(backend, true);
	CHECK(!pi, "directory accepted");
	rmdir(path);
}

int main(void)
{
	one(PERFINJECT_BACKEND_PERFMAP, "%s/perf-%d.map");
	one(PERFINJECT_BACKEND_JITDUMP, "%s/jit-%d.dump");
	if (geteuid() != 0)
		fprintf(stderr, "note: not root, other-uid case not run\n");
	return t_done();
}
