/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The input of fuzz-unwind: what a process of any user can put in a
 * perf.data file through PERF_RECORD_JIT_CODE_DATA (unwind information
 * and a line table, as untrusted as they come) and the user stack and
 * registers of a sample in its JIT code.
 *
 *   struct unwind_input	the header
 *   unwind_size[0] bytes	the UNWIND data of function A
 *				(struct perf_jit_code_unwind, .eh_frame,
 *				.eh_frame_hdr), none if 0
 *   unwind_size[1] bytes	the UNWIND data of function B
 *   lines_size bytes		the LINES data of function A
 *				(struct perf_jit_code_lines)
 *   the rest			the sample's user stack, from sp, up to
 *				UNWIND_STACK_MAX bytes
 *
 * A size past what the input holds is cut to it. The process has two
 * functions, A at UNWIND_CODE_A and B at UNWIND_CODE_B, each
 * UNWIND_CODE_LEN bytes long, loaded by PERF_RECORD_JIT_CODE and known
 * by no file. The data goes in pieces of at most UNWIND_PIECE bytes, as
 * the kernel writes them.
 */
#ifndef UNWIND_INPUT_H
#define UNWIND_INPUT_H

#include <stdint.h>

#define UNWIND_CODE_A		0x7f3a40001000ULL
#define UNWIND_CODE_B		0x7f3a40003000ULL
#define UNWIND_CODE_LEN		0x100
#define UNWIND_STACK		0x7ffc3b400000ULL	/* sp of the seeds */
#define UNWIND_STACK_MAX	8192
#define UNWIND_PIECE		16384
#define UNWIND_NAME_A		"fuzz_jit_a"
#define UNWIND_NAME_B		"fuzz_jit_b"

struct unwind_input {
	uint32_t	unwind_size[2];
	uint32_t	lines_size;
	uint32_t	flags;		/* 0 */
	uint64_t	ip;		/* the sample's user registers */
	uint64_t	sp;
	uint64_t	bp;
};

#endif
