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
#define PR_PERF_JIT_CODE		82
#endif

#if defined(PERF_JIT_CODE_MAX_ENTRIES) && !defined(PERF_JIT_CODE_ENTRY_SIZE_VER1)
#error "<linux/perf_event.h> has an older JIT code ABI, without PERF_JIT_CODE_DATA"
#endif

#ifndef PERF_JIT_CODE_MAX_ENTRIES
enum perf_jit_code_op {
	PERF_JIT_CODE_UNKNOWN		= 0,
	PERF_JIT_CODE_LOAD		= 1,
	PERF_JIT_CODE_UNLOAD		= 2,
	PERF_JIT_CODE_MOVE		= 3,
	PERF_JIT_CODE_FLUSH		= 4,
	PERF_JIT_CODE_DATA		= 5,
	PERF_JIT_CODE_OP_MAX,
};

enum perf_jit_code_data_type {
	PERF_JIT_CODE_DATA_UNKNOWN	= 0,
	PERF_JIT_CODE_DATA_BYTES	= 1,
	PERF_JIT_CODE_DATA_LINES	= 2,
	PERF_JIT_CODE_DATA_UNWIND	= 3,
	PERF_JIT_CODE_DATA_TYPE_MAX,
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
	__u64	data;
	__u32	data_type;
	__u32	data_size;
};

#define PERF_JIT_CODE_ENTRY_SIZE_VER0	48
#define PERF_JIT_CODE_ENTRY_SIZE_VER1	64

struct perf_jit_code_line {
	__u32	offset;
	__u32	line;
	__u32	column;
	__u32	depth;
	__u32	file;
	__u32	function;
};

struct perf_jit_code_lines {
	__u32	nr_lines;
	__u32	strings_size;
	struct perf_jit_code_line lines[];
};

enum perf_jit_code_unwind_format {
	PERF_JIT_CODE_UNWIND_EH_FRAME	= 1,
};

struct perf_jit_code_unwind {
	__u32	format;
	__u32	eh_frame_hdr_size;
	__u64	addr;
};

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
#define PERF_JIT_CODE_BYTES_MAX		(1U << 20)
#define PERF_JIT_CODE_LINES_MAX		(1U << 20)
#define PERF_JIT_CODE_UNWIND_MAX	(1U << 16)
#endif /* PERF_JIT_CODE_MAX_ENTRIES */

#ifndef PERF_EVENT_IOC_JIT_CODE
#define PERF_EVENT_IOC_JIT_CODE \
	_IOW('$', 12, struct perf_jit_code_args)
#endif

/* PERF_RECORD_JIT_CODE(_DATA); older headers lack the enum values. */
#define PERFINJECT_PERF_RECORD_JIT_CODE		23
#define PERFINJECT_PERF_RECORD_JIT_CODE_DATA	24

/*
 * attr.jit_code is bit 40 of the flags word that follows read_format
 * (after sigtrap, bit 37, and mainline's bits 38 and 39). Older headers
 * do not name it, so set it through this mask.
 */
#define PERFINJECT_ATTR_FLAG_JIT_CODE	(1ULL << 40)
/* attr.jit_code_data and attr.jit_code_bytes, the two bits after it */
#define PERFINJECT_ATTR_FLAG_JIT_CODE_DATA	(1ULL << 41)
#define PERFINJECT_ATTR_FLAG_JIT_CODE_BYTES	(1ULL << 42)

#endif /* __PERFINJECT_UAPI_JIT_CODE_H */
