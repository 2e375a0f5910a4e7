/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The parts of the perfinject kernel ABI the library needs, for building
 * against system headers that predate it. The definitions match
 * include/uapi/linux/perf_event.h and include/uapi/linux/prctl.h of the
 * perfinject kernel series; each block is skipped when the system header
 * already has it.
 */
#ifndef __PERFINJECT_UAPI_JIT_CODE_H
#define __PERFINJECT_UAPI_JIT_CODE_H

#include <linux/types.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>

#ifndef PR_PERF_JIT_CODE
#define PR_PERF_JIT_CODE		0x4a495443	/* "JITC" */
#endif

#ifndef PERF_JIT_CODE_MAX_ENTRIES
enum perf_jit_code_op {
	PERF_JIT_CODE_UNKNOWN		= 0,
	PERF_JIT_CODE_LOAD		= 1,
	PERF_JIT_CODE_UNLOAD		= 2,
	PERF_JIT_CODE_MOVE		= 3,
	PERF_JIT_CODE_FLUSH		= 4,
	PERF_JIT_CODE_OP_MAX,
};

#define PERF_JIT_CODE_FLAGS_SYNTHESIZED	(1U << 0)

struct perf_jit_code_entry {
	__u32	op;
	__u32	flags;
	__u64	addr;
	__u64	len;
	__u64	new_addr;
	__u64	code_index;
	__u64	name;
};

#define PERF_JIT_CODE_ENTRY_SIZE_VER0	48

struct perf_jit_code_args {
	__u32	size;
	__u32	flags;
	__u64	entries;
	__u32	nr_entries;
	__u32	entry_size;
	__s32	pid;
	__u32	__reserved;
};

#define PERF_JIT_CODE_ARGS_SIZE_VER0	32
#define PERF_JIT_CODE_MAX_ENTRIES	1024
#define PERF_JIT_CODE_NAME_MAX		1024
#endif /* PERF_JIT_CODE_MAX_ENTRIES */

#ifndef PERF_EVENT_IOC_JIT_CODE
#define PERF_EVENT_IOC_JIT_CODE \
	_IOWR('$', 0x40, struct perf_jit_code_args)
#endif

/* PERF_RECORD_JIT_CODE; older headers lack the enum value. */
#define PERFINJECT_PERF_RECORD_JIT_CODE	32

/*
 * attr.jit_code is the top bit of the flags word that follows
 * read_format (after sigtrap and 25 reserved bits). Older headers do not
 * name it, so set it through this mask.
 */
#define PERFINJECT_ATTR_FLAG_JIT_CODE	(1ULL << 63)

#endif /* __PERFINJECT_UAPI_JIT_CODE_H */
