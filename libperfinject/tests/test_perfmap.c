// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The perf-map file, parsed back the way perf reads it. */
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

int main(void)
{
	unsigned long long start, size;
	char path[256], name[256], *text, *line, *save;
	struct perfinject *pi;
	struct stat st;
	size_t len;
	int n = 0;

	PERFINJECT_OPTS(opts, .backends = PERFINJECT_BACKEND_PERFMAP,
			.dir = t_tmpdir(), .flags = PERFINJECT_F_STRICT);
	pi = perfinject__new(&opts);
	if (!pi) {
		fprintf(stderr, "new: %s\n", strerror(errno));
		return T_FAIL;
	}
	CHECK_EQ(perfinject__load(pi, "jit_a", 0x7f0000001000, 0x40, 1), 0);
	CHECK_EQ(perfinject__load(pi, "with space(I)V", 0x7f0000002000, 0x10, 2),
		 0);
	CHECK_EQ(perfinject__load(pi, "multi\nline", 0x7f0000003000, 0x8, 3), 0);
	CHECK_EQ(perfinject__unload(pi, 0x7f0000001000), 0);
	CHECK_EQ(perfinject__move(pi, 0x7f0000002000, 0x7f0000004000), 0);
	CHECK_EQ(perfinject__rundown(pi), 2);

	snprintf(path, sizeof(path), "%s/perf-%d.map", t_tmpdir(), getpid());
	CHECK(stat(path, &st) == 0, "stat %s", path);
	CHECK_EQ(st.st_mode & 07777, 0600);
	CHECK_EQ(st.st_uid, geteuid());
	text = t_slurp(path, &len);
	CHECK(text, "read %s", path);
	if (!text)
		return t_done();

	const struct {
		unsigned long long start, size;
		const char *name;
	} want[] = {
		{ 0x7f0000001000, 0x40, "jit_a" },
		{ 0x7f0000002000, 0x10, "with space(I)V" },
		{ 0x7f0000003000, 0x8, "multi line" },
		{ 0x7f0000004000, 0x10, "with space(I)V" },
		/* rundown: two live entries, in any order */
	};
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), n++) {
		/* perf: "%lx %lx %s" per line, name to the end of line */
		int off = 0;

		CHECK(sscanf(line, "%llx %llx %n", &start, &size, &off) == 2 &&
		      off, "line %d: %s", n, line);
		snprintf(name, sizeof(name), "%s", line + off);
		if (n < 4) {
			CHECK(start == want[n].start && size == want[n].size &&
			      !strcmp(name, want[n].name), "line %d: %s", n,
			      line);
		} else {
			CHECK((start == 0x7f0000003000 && size == 8) ||
			      (start == 0x7f0000004000 && size == 0x10),
			      "rundown line %d: %s", n, line);
		}
	}
	CHECK_EQ(n, 6);
	free(text);
	perfinject__free(pi);
	/* perf reads the map after the process is gone: it stays. */
	CHECK(access(path, F_OK) == 0, "map removed at free");
	return t_done();
}
