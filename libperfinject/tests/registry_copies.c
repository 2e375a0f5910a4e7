// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A process with two copies of libperfinject, as a runtime that embeds
 * another would have: this program's (linked in) and plugin_copy.so's
 * (dlopen()ed, libperfinject.a inside). Each loads N functions, then the
 * program says so on stdout and waits to be killed. scripts/perf-e2e
 * attaches perf to it: perf must replay the code of both registries.
 *
 *   registry_copies PLUGIN_SO DIR N
 *
 * DIR takes the plugin's perf-map and jitdump; names are copyA_fn_I and
 * copyB_fn_I.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <perfinject/perfinject.h>

#define CODE_LEN	32

int main(int argc, char **argv)
{
	int (*plugin_load)(const char *name, const void *code,
			   unsigned long len);
	int (*plugin_start)(const char *dir);
	struct perfinject *pi;
	unsigned char *code;
	char name[64];
	void *plugin;
	long i, n;
	int err;

	if (argc != 4 || (n = strtol(argv[3], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: %s PLUGIN_SO DIR N\n", argv[0]);
		return 2;
	}
	code = mmap(NULL, 2 * n * CODE_LEN, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(code, 0xc3, 2 * n * CODE_LEN);	/* ret */

	plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!plugin) {
		fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
		return 1;
	}
	plugin_start = (int (*)(const char *))dlsym(plugin, "plugin_start");
	plugin_load = (int (*)(const char *, const void *, unsigned long))
		dlsym(plugin, "plugin_load");
	if (!plugin_start || !plugin_load || plugin_start(argv[2])) {
		fprintf(stderr, "%s: cannot start the plugin's copy\n", argv[1]);
		return 1;
	}
	pi = perfinject__new(NULL);
	if (!pi) {
		perror("perfinject__new");
		return 1;
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "copyA_fn_%ld", i);
		err = perfinject__load(pi, name, (uintptr_t)&code[i * CODE_LEN],
				       CODE_LEN, 0);
		if (!err) {
			snprintf(name, sizeof(name), "copyB_fn_%ld", i);
			err = plugin_load(name, &code[(n + i) * CODE_LEN],
					  CODE_LEN) ? -errno : 0;
		}
		if (err) {
			fprintf(stderr, "load %ld: %s\n", i, strerror(-err));
			return 1;
		}
	}
	printf("%ld functions live in each of two copies\n", n);
	fflush(stdout);
	for (;;)
		pause();
}
