// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A second copy of the library in one process: this shared object links
 * libperfinject.a and exports its own functions and the registry
 * descriptor (tests/plugin_copy.map), as a JVMTI agent or a language
 * runtime with a vendored copy would. test_two_writers dlopen()s it next
 * to the copy it is linked with.
 */
#include <stdio.h>

#include <perfinject/perfinject.h>

static struct perfinject *pi;

__attribute__((visibility("default")))
int plugin_start(const char *dir)
{
	PERFINJECT_OPTS(opts, .dir = dir, .flags = PERFINJECT_F_STRICT,
			.backends = PERFINJECT_BACKEND_PERFMAP |
				    PERFINJECT_BACKEND_JITDUMP);

	pi = perfinject__new(&opts);
	return pi ? 0 : -1;
}

__attribute__((visibility("default")))
int plugin_load(const char *name, const void *code, unsigned long len)
{
	return perfinject__load(pi, name, (uintptr_t)code, len, 0);
}

__attribute__((visibility("default")))
void plugin_stop(void)
{
	perfinject__free(pi);
	pi = NULL;
}

/* Which copy: the address of its registry descriptor. */
__attribute__((visibility("default")))
const void *plugin_descriptor(void)
{
	return perfinject_registry__descriptor();
}
