// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Default selection: the kernel backend when PR_PERF_JIT_CODE probes,
 * else none; PERFINJECT_BACKENDS replaces the default only.
 */
#include <sys/prctl.h>
#include <unistd.h>

#include "helpers.h"

#define PR_PERF_JIT_CODE 82

int main(void)
{
	int probe = prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 0UL, 0UL);
	bool kernel = probe >= 0;
	struct perfinject *pi;

	CHECK(kernel ? (probe & 0xe) == 0xe : errno == EINVAL,
	      "probe %d errno %d", probe, errno);

	unsetenv("PERFINJECT_BACKENDS");
	pi = perfinject__new(NULL);
	CHECK(pi, "new: %s", strerror(errno));
	CHECK_EQ(perfinject__backends(pi),
		 kernel ? PERFINJECT_BACKEND_KERNEL : 0);
	/* With no backend, the registry still works. */
	CHECK_EQ(perfinject__load(pi, "f", 0x10000, 16, 1), 0);
	CHECK_EQ(perfinject__unload(pi, 0x10000), 0);
	perfinject__free(pi);

	/* Asking for the kernel explicitly. */
	PERFINJECT_OPTS(opts, .backends = PERFINJECT_BACKEND_KERNEL,
			.flags = PERFINJECT_F_STRICT);
	errno = 0;
	pi = perfinject__new(&opts);
	if (kernel) {
		CHECK(pi && perfinject__backends(pi) ==
		      PERFINJECT_BACKEND_KERNEL, "kernel");
	} else {
		CHECK(!pi && errno == EOPNOTSUPP, "strict kernel: errno %d",
		      errno);
		opts.flags = 0;
		pi = perfinject__new(&opts);
		CHECK(pi && perfinject__backends(pi) == 0, "dropped");
	}
	perfinject__free(pi);

	/* The environment replaces the default... */
	setenv("PERFINJECT_BACKENDS", "perfmap, bogus,jitdump", 1);
	opts = (struct perfinject_opts){ .sz = sizeof(opts),
					 .dir = t_tmpdir() };
	pi = perfinject__new(&opts);
	CHECK(pi && perfinject__backends(pi) == (PERFINJECT_BACKEND_PERFMAP |
						 PERFINJECT_BACKEND_JITDUMP),
	      "env: %#x", pi ? perfinject__backends(pi) : 0);
	perfinject__free(pi);
	setenv("PERFINJECT_BACKENDS", "none", 1);
	pi = perfinject__new(&opts);
	CHECK(pi && perfinject__backends(pi) == 0, "env none");
	perfinject__free(pi);
	/* ...but not an explicit choice, and not with F_NO_ENV. */
	setenv("PERFINJECT_BACKENDS", "jitdump", 1);
	opts.backends = PERFINJECT_BACKEND_PERFMAP;
	pi = perfinject__new(&opts);
	CHECK(pi && perfinject__backends(pi) == PERFINJECT_BACKEND_PERFMAP,
	      "explicit wins");
	perfinject__free(pi);
	opts.backends = 0;
	opts.flags = PERFINJECT_F_NO_ENV;
	pi = perfinject__new(&opts);
	CHECK(pi && perfinject__backends(pi) ==
	      (kernel ? PERFINJECT_BACKEND_KERNEL : 0), "no env");
	perfinject__free(pi);
	return t_done();
}
