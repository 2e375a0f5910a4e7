// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The jitdump file parsed back field by field against
 * tools/perf/Documentation/jitdump-specification.txt.
 */
#include <elf.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Is the file mapped executable in this process (perf's marker)? */
static int nr_warn;
static char last_warn[256];

static int count_warn(enum perfinject_print_level level, const char *fmt,
		      va_list ap)
{
	if (level == PERFINJECT_WARN) {
		nr_warn++;
		vsnprintf(last_warn, sizeof(last_warn), fmt, ap);
	}
	return 0;
}

static int marker_mapped(const char *path)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, path) && strstr(line, " r-xp "))
			found = 1;
	if (f)
		fclose(f);
	return found;
}

int main(void)
{
	static unsigned char code1[32], code2[100], zeros[16];
	uint64_t t0 = mono_ns(), t_end, prev_ts;
	char path[256], *buf, *p, *end;
	uint32_t tid = syscall(SYS_gettid);
	struct perfinject *pi;
	struct stat st;
	size_t len, i;
	uint64_t index[2] = { 0 };
	int nrec = 0, rc;

	for (i = 0; i < sizeof(code1); i++)
		code1[i] = i * 7 + 1;
	for (i = 0; i < sizeof(code2); i++)
		code2[i] = 0xff - i;

	PERFINJECT_OPTS(opts, .backends = PERFINJECT_BACKEND_JITDUMP,
			.dir = t_tmpdir(), .flags = PERFINJECT_F_STRICT);
	pi = perfinject__new(&opts);
	if (!pi) {
		fprintf(stderr, "new: %s\n", strerror(errno));
		return T_FAIL;
	}
	snprintf(path, sizeof(path), "%s/jit-%d.dump", t_tmpdir(), getpid());
	CHECK(marker_mapped(path), "no r-x mapping of %s", path);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600,
	      "mode %o", st.st_mode & 07777);

	CHECK_EQ(perfinject__load(pi, "first", (uintptr_t)code1, sizeof(code1),
				  11), 0);
	CHECK_EQ(perfinject__load(pi, "second", (uintptr_t)code2,
				  sizeof(code2), 0), 0);
	/*
	 * Unreadable code: the record still goes in whole, with zeros for
	 * the code, and the library says so.
	 */
	perfinject_set_print(count_warn);
	rc = perfinject__load(pi, "bad", 0x1000, 16, 0);
	CHECK_EQ(rc, 0);
	CHECK(nr_warn == 1 && strstr(last_warn, "0x1000"), "warnings %d: %s",
	      nr_warn, last_warn);
	CHECK_EQ(perfinject__move(pi, (uintptr_t)code1, (uintptr_t)code1 + 1),
		 0);
	CHECK_EQ(perfinject__unload(pi, (uintptr_t)code2), 0);
	CHECK_EQ(perfinject__unload(pi, 0x1000), 0);
	perfinject__free(pi);
	t_end = mono_ns();
	CHECK(!marker_mapped(path), "marker left mapped");

	buf = t_slurp(path, &len);
	CHECK(buf && len >= 40, "read %s", path);
	if (!buf || len < 40)
		return t_done();
	/* File header. */
	CHECK_EQ(t_rd32(buf), 0x4A695444);
	CHECK_EQ(t_rd32(buf + 4), 1);
	CHECK_EQ(t_rd32(buf + 8), 40);
	CHECK_EQ(t_rd32(buf + 12), EM_X86_64);
	CHECK_EQ(t_rd32(buf + 16), 0);
	CHECK_EQ(t_rd32(buf + 20), getpid());
	CHECK(t_rd64(buf + 24) >= t0 && t_rd64(buf + 24) <= t_end, "header time");
	CHECK_EQ(t_rd64(buf + 32), 0);
	prev_ts = t_rd64(buf + 24);

	for (p = buf + 40, end = buf + len; p < end; p += t_rd32(p + 4), nrec++) {
		uint32_t id = t_rd32(p), size = t_rd32(p + 4);
		uint64_t ts = t_rd64(p + 8);

		CHECK(p + 16 <= end && size >= 16 && p + size <= end,
		      "record %d size %u", nrec, size);
		if (size < 16 || p + size > end)
			break;
		CHECK(ts >= prev_ts && ts <= t_end, "record %d time", nrec);
		prev_ts = ts;
		switch (nrec) {
		case 0:
		case 1: {
			const char *name = nrec ? "second" : "first";
			unsigned char *code = nrec ? code2 : code1;
			uint64_t csize = nrec ? sizeof(code2) : sizeof(code1);

			CHECK_EQ(id, 0); /* JIT_CODE_LOAD */
			CHECK_EQ(size, 56 + strlen(name) + 1 + csize);
			CHECK_EQ(t_rd32(p + 16), getpid());
			CHECK_EQ(t_rd32(p + 20), tid);
			CHECK_EQ(t_rd64(p + 24), (uintptr_t)code);	/* vma */
			CHECK_EQ(t_rd64(p + 32), (uintptr_t)code);	/* code_addr */
			CHECK_EQ(t_rd64(p + 40), csize);
			/* Generated, unique in the process: not 11. */
			CHECK(t_rd64(p + 48) >> 63 && t_rd64(p + 48) != index[!nrec],
			      "index %llx", (unsigned long long)t_rd64(p + 48));
			index[nrec] = t_rd64(p + 48);
			CHECK(!strcmp(p + 56, name), "name %s", p + 56);
			CHECK(!memcmp(p + 56 + strlen(name) + 1, code, csize),
			      "code bytes of %s", name);
			break;
		}
		case 2:
			CHECK_EQ(id, 0); /* JIT_CODE_LOAD of "bad" */
			CHECK_EQ(size, 56 + 4 + 16);
			CHECK_EQ(t_rd64(p + 32), 0x1000);
			CHECK(!strcmp(p + 56, "bad"), "name %s", p + 56);
			CHECK(!memcmp(p + 60, zeros, 16), "code not zeros");
			break;
		case 3:
			CHECK_EQ(id, 1); /* JIT_CODE_MOVE */
			CHECK_EQ(size, 64);
			CHECK_EQ(t_rd32(p + 16), getpid());
			CHECK_EQ(t_rd32(p + 20), tid);
			CHECK_EQ(t_rd64(p + 24), (uintptr_t)code1 + 1);
			CHECK_EQ(t_rd64(p + 32), (uintptr_t)code1);
			CHECK_EQ(t_rd64(p + 40), (uintptr_t)code1 + 1);
			CHECK_EQ(t_rd64(p + 48), sizeof(code1));
			CHECK_EQ(t_rd64(p + 56), index[0]);
			break;
		case 4:
			CHECK_EQ(id, 3); /* JIT_CODE_CLOSE */
			CHECK_EQ(size, 16);
			break;
		}
	}
	CHECK_EQ(nrec, 5);
	CHECK(p == end, "trailing bytes");
	free(buf);
	return t_done();
}
