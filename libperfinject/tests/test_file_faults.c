// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The file backends where the file system says no: a full disk (the
 * writes come up short, then fail with ENOSPC), a read-only directory,
 * and a /tmp mounted noexec (no executable marker mapping for the
 * jitdump). In each case the runtime's calls must succeed and lose
 * nothing from the registry, the files must stay whole (no torn line, no
 * torn record: perf reads what is there), and the library must say what
 * happened once, not once per call.
 *
 * Needs a private mount namespace for its small tmpfs mounts: root (or
 * CAP_SYS_ADMIN); skipped otherwise.
 */
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

static int warnings;
static char last_warning[256];

static int count_warnings(enum perfinject_print_level level, const char *fmt,
			  va_list ap)
{
	if (level == PERFINJECT_WARN) {
		warnings++;
		vsnprintf(last_warning, sizeof(last_warning), fmt, ap);
	}
	return 0;
}

static char mnt[64];

static bool mount_tmpfs(const char *opts, unsigned long flags)
{
	umount2(mnt, MNT_DETACH);
	return !mount("perfinject-test", mnt, "tmpfs", flags, opts);
}

/* Code to describe: real bytes, for the jitdump's copies. */
static unsigned char code[64 * 256];

/* Every line of the perf map whole: "START SIZE name\n". */
static int perfmap_whole(const char *path, int *lines)
{
	size_t len, i, start = 0;
	char *text = t_slurp(path, &len);
	unsigned long long a, s;
	int off;

	*lines = 0;
	if (!text)
		return -1;
	if (len && text[len - 1] != '\n') {
		free(text);
		return -1;
	}
	for (i = 0; i < len; i++) {
		if (text[i] != '\n')
			continue;
		text[i] = '\0';
		off = 0;
		if (sscanf(text + start, "%llx %llx %n", &a, &s, &off) != 2 ||
		    !off) {
			free(text);
			return -1;
		}
		(*lines)++;
		start = i + 1;
	}
	free(text);
	return 0;
}

/* The jitdump framed exactly to its end. */
static int jitdump_whole(const char *path, int *records)
{
	size_t len, at;
	char *buf = t_slurp(path, &len);

	*records = 0;
	if (!buf || len < 40 || t_rd32(buf) != 0x4A695444) {
		free(buf);
		return -1;
	}
	for (at = t_rd32(buf + 8); at + 16 <= len; at += t_rd32(buf + at + 4)) {
		if (t_rd32(buf + at + 4) < 16 ||
		    t_rd32(buf + at + 4) > len - at)
			break;
		(*records)++;
	}
	free(buf);
	return at == len ? 0 : -1;
}

static void full_disk(void)
{
	PERFINJECT_OPTS(opts, .backends = PERFINJECT_BACKEND_PERFMAP |
			PERFINJECT_BACKEND_JITDUMP,
			.flags = PERFINJECT_F_STRICT | PERFINJECT_F_NO_ENV,
			.dir = mnt);
	char path[128], name[96];
	struct perfinject *pi;
	int i, rc, bad = 0, lines, records;

	if (!mount_tmpfs("size=64k", 0)) {
		CHECK(0, "mount tmpfs size=64k: %s", strerror(errno));
		return;
	}
	warnings = 0;
	pi = perfinject__new(&opts);
	CHECK(pi, "new: %s", strerror(errno));
	if (!pi)
		return;
	for (i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name),
			 "Lcom/example/app/Service;method%d(Ljava/lang/String;)V", i);
		rc = perfinject__load(pi, name,
				      (uint64_t)(uintptr_t)code + (i % 256) * 64,
				      64, 0);
		/* New code over old: unload what was there first. */
		if (rc == -EEXIST) {
			perfinject__unload(pi, (uint64_t)(uintptr_t)code +
					   (i % 256) * 64);
			rc = perfinject__load(pi, name,
					      (uint64_t)(uintptr_t)code +
					      (i % 256) * 64, 64, 0);
		}
		bad += rc != 0;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(perfinject__count(pi), 256);
	snprintf(path, sizeof(path), "%s/perf-%d.map", mnt, getpid());
	CHECK(!perfmap_whole(path, &lines), "%s has a torn line", path);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", mnt, getpid());
	CHECK(!jitdump_whole(path, &records), "%s has a torn record", path);
	CHECK(lines > 0 && records > 0, "%d lines, %d records", lines, records);
	/* 2,000 loads and 1,744 unloads: a message per file at most. */
	CHECK(warnings >= 1 && warnings <= 4,
	      "%d warnings on a full disk (the last: %s)", warnings,
	      last_warning);
	perfinject__free(pi);
	CHECK(!jitdump_whole(path, &records), "%s torn at its end", path);
}

/*
 * Room for half the jitdump's header (a file size limit: the write
 * comes back short, then fails with EFBIG): no file with half a header,
 * which perf would refuse whole.
 */
static void half_header(void)
{
	PERFINJECT_OPTS(opts, .backends = PERFINJECT_BACKEND_JITDUMP,
			.flags = PERFINJECT_F_STRICT | PERFINJECT_F_NO_ENV,
			.dir = mnt);
	struct rlimit old, half = { 20, RLIM_INFINITY };
	char path[128];
	struct perfinject *pi;
	struct stat st;

	if (!mount_tmpfs("size=64k", 0)) {
		CHECK(0, "mount tmpfs size=64k: %s", strerror(errno));
		return;
	}
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	half.rlim_max = old.rlim_max;
	setrlimit(RLIMIT_FSIZE, &half);
	errno = 0;
	pi = perfinject__new(&opts);
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(!pi && errno == EFBIG, "strict new with room for 20 bytes: %p, %s",
	      (void *)pi, strerror(errno));
	perfinject__free(pi);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", mnt, getpid());
	CHECK(stat(path, &st) || st.st_size == 0,
	      "%s holds %lld bytes of a header", path, (long long)st.st_size);
}

static void read_only(void)
{
	PERFINJECT_OPTS(opts, .backends = PERFINJECT_BACKEND_PERFMAP |
			PERFINJECT_BACKEND_JITDUMP,
			.flags = PERFINJECT_F_STRICT | PERFINJECT_F_NO_ENV,
			.dir = mnt);
	struct perfinject *pi;

	if (!mount_tmpfs("size=64k", MS_RDONLY)) {
		CHECK(0, "mount tmpfs ro: %s", strerror(errno));
		return;
	}
	errno = 0;
	pi = perfinject__new(&opts);
	CHECK(!pi && errno == EROFS, "strict new in a read-only dir: %p, %s",
	      (void *)pi, strerror(errno));
	perfinject__free(pi);

	opts.flags = PERFINJECT_F_NO_ENV;
	warnings = 0;
	pi = perfinject__new(&opts);
	CHECK(pi, "new: %s", strerror(errno));
	if (!pi)
		return;
	CHECK_EQ(perfinject__backends(pi), 0);
	CHECK_EQ(warnings, 2);
	CHECK(strstr(last_warning, "Read-only"), "said: %s", last_warning);
	CHECK_EQ(perfinject__load(pi, "still_in_registry", 0x7f0000001000, 16,
				  0), 0);
	CHECK_EQ(perfinject__count(pi), 1);
	perfinject__free(pi);
}

static void noexec(void)
{
	PERFINJECT_OPTS(opts, .backends = PERFINJECT_BACKEND_JITDUMP,
			.flags = PERFINJECT_F_STRICT | PERFINJECT_F_NO_ENV,
			.dir = mnt);
	struct perfinject *pi;

	if (!mount_tmpfs("size=64k", MS_NOEXEC)) {
		CHECK(0, "mount tmpfs noexec: %s", strerror(errno));
		return;
	}
	/* perf finds a jitdump by its executable mapping: none, no file. */
	errno = 0;
	pi = perfinject__new(&opts);
	CHECK(!pi && errno == EPERM, "strict jitdump on noexec: %p, %s",
	      (void *)pi, strerror(errno));
	perfinject__free(pi);

	opts.backends |= PERFINJECT_BACKEND_PERFMAP;
	opts.flags = PERFINJECT_F_NO_ENV;
	warnings = 0;
	pi = perfinject__new(&opts);
	CHECK(pi, "new: %s", strerror(errno));
	if (!pi)
		return;
	/* The perf map needs no mapping. */
	CHECK_EQ(perfinject__backends(pi), PERFINJECT_BACKEND_PERFMAP);
	CHECK_EQ(warnings, 1);
	CHECK(strstr(last_warning, "jitdump"), "said: %s", last_warning);
	perfinject__free(pi);
}

int main(void)
{
	if (unshare(CLONE_NEWNS))
		SKIP("needs a mount namespace (root): %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		SKIP("cannot make the mounts private: %s", strerror(errno));
	snprintf(mnt, sizeof(mnt), "%s", t_tmpdir());
	perfinject_set_print(count_warnings);
	memset(code, 0xc3, sizeof(code));

	full_disk();
	half_header();
	read_only();
	noexec();
	umount2(mnt, MNT_DETACH);
	return t_done();
}
