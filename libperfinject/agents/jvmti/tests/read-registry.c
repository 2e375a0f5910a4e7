// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * read-registry PID: print the live code registry of process PID, as a
 * profiler attaching to it would read it, one "ADDR LEN INDEX NAME" line
 * an entry, then "entries: N" on stderr.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfinject/perfinject.h>

static int print_entry(const struct perfinject_code *code, void *ctx)
{
	(void)ctx;
	printf("0x%" PRIx64 " %" PRIu64 " %" PRIu64 " %s\n", code->addr,
	       code->len, code->code_index, code->name);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t desc;
	pid_t pid;
	int n;

	pid = argc == 2 ? atoi(argv[1]) : 0;
	if (pid <= 0) {
		fprintf(stderr, "usage: read-registry PID\n");
		return 2;
	}
	n = perfinject_registry__find_pid(pid, &desc);
	if (n) {
		fprintf(stderr, "read-registry: no registry in %d: %s\n",
			(int)pid, strerror(-n));
		return 1;
	}
	n = perfinject_registry__read_pid(pid, desc, print_entry, NULL);
	if (n < 0) {
		fprintf(stderr, "read-registry: reading %d: %s\n", (int)pid,
			strerror(-n));
		return 1;
	}
	fprintf(stderr, "entries: %d\n", n);
	return 0;
}
