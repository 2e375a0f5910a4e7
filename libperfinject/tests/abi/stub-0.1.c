// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Link-time stand-in for libperfinject 0.1: the names of its version
 * node, nothing more. old_program links against it and runs with the
 * real library.
 */
#define STUB(name) void name(void); void name(void) { }

STUB(perfinject__backends)
STUB(perfinject__batch)
STUB(perfinject__count)
STUB(perfinject__find)
STUB(perfinject__free)
STUB(perfinject__load)
STUB(perfinject__move)
STUB(perfinject__new)
STUB(perfinject__rundown)
STUB(perfinject__unload)
STUB(perfinject__unload_index)
STUB(perfinject_check_version)
STUB(perfinject_registry__descriptor)
STUB(perfinject_registry__find_pid)
STUB(perfinject_registry__read_pid)
STUB(perfinject_version_major)
STUB(perfinject_version_minor)
char perfinject_registry_descriptor[48];
