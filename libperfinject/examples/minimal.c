// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * minimal: the calls a runtime needs to tell perf about the code it
 * generates. One handle per process, one perfinject__load() when code
 * becomes callable, one perfinject__unload() before its memory is reused
 * or freed, perfinject__free() at exit.
 *
 * The "code" here is a page of ret instructions; a real runtime reports
 * what its compiler emitted. Build with "make -C examples" and run with,
 * for instance, PERFINJECT_BACKENDS=perfmap ./examples/minimal, then look
 * at /tmp/perf-<pid>.map while it sleeps.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <perfinject/perfinject.h>

int main(void)
{
	/*
	 * No fields set: the backends come from PERFINJECT_BACKENDS, or
	 * the kernel one when the kernel has PR_PERF_JIT_CODE. Without
	 * either, every call below still succeeds and reports nothing:
	 * a runtime never needs a code path for "no profiler support".
	 */
	PERFINJECT_OPTS(opts);
	long page = sysconf(_SC_PAGESIZE);
	struct perfinject *pi;
	unsigned char *code;
	int err;

	/* Compiled against 0.1, so refuse an older library at run time. */
	if (!perfinject_check_version(0, 1)) {
		fprintf(stderr, "libperfinject %d.%d is too old\n",
			perfinject_version_major(),
			perfinject_version_minor());
		return 1;
	}

	pi = perfinject__new(&opts);
	if (!pi) {
		fprintf(stderr, "perfinject__new: %s\n", strerror(errno));
		return 1;
	}
	printf("pid %d, backends 0x%x\n", (int)getpid(),
	       perfinject__backends(pi));

	code = mmap(NULL, page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("mmap");
		perfinject__free(pi);
		return 1;
	}
	memset(code, 0xc3, page);	/* x86 "ret"; never executed here */
	if (mprotect(code, page, PROT_READ | PROT_EXEC)) {
		err = -errno;
		perror("mprotect");
		goto out;
	}

	/*
	 * Report the code once it is in place and before anything runs
	 * it: samples taken after this call are attributed to the name.
	 * The code index is the runtime's id of this compilation (0 if it
	 * has none); it lets perfinject__unload_index() find it again.
	 */
	err = perfinject__load(pi, "minimal:hello", (uintptr_t)code, 64, 1);
	if (err) {
		fprintf(stderr, "perfinject__load: %s\n", strerror(-err));
		goto out;
	}
	printf("loaded minimal:hello at %p, %zu live\n", (void *)code,
	       perfinject__count(pi));

	sleep(1);	/* a profiler attached now sees the name */

	/* The memory is about to be reused: say so first. */
	err = perfinject__unload(pi, (uintptr_t)code);
	if (err)
		fprintf(stderr, "perfinject__unload: %s\n", strerror(-err));

out:
	munmap(code, page);
	/* Unloads whatever is still live and closes the files. */
	perfinject__free(pi);
	return err ? 1 : 0;
}
