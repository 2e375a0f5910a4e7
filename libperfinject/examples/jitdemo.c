// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * jitdemo: a small x86-64 JIT that reports its code through libperfinject.
 *
 * Each thread owns a few one-page code slots. For every round and every
 * function it emits a counted loop of arithmetic into a slot (written
 * while the page is read-write, then made read+execute: W^X), reports it
 * with perfinject__load(), checks it against an interpreter of the same
 * operations, calls it for -d milliseconds, and reports
 * perfinject__unload() before the slot takes the next function. The
 * functions differ in their operations, constants and length, so a
 * profile can tell them apart. With -m, half-way through each function
 * the code is copied to the next slot and reported with
 * perfinject__move(), the way a compacting code cache moves code.
 *
 * Backends are the library's default choice: PERFINJECT_BACKENDS if set,
 * else the kernel's PR_PERF_JIT_CODE where the kernel has it, else none
 * (the demo still runs, and nothing is reported).
 *
 * Usage: jitdemo [-t threads] [-r rounds] [-f functions] [-d ms] [-m] [-F]
 *                [-c cold] [-s [-o]] [-l logfile]
 *
 * With -s, the code has call stacks, source lines and unwind information,
 * as a runtime's compiled code does: it is the program of jitdemo.src
 * (shipped next to this file). Each thread loads two functions of its
 * own that stay live, jit:run, which calls a function a number of times,
 * and jit:mix, which every function calls at each iteration. So a sample
 * in jit:mix has the function that ran then as its caller, and jit:run
 * above that; each function starts with a frame-pointer prologue (push
 * rbp; mov rbp, rsp), as with -XX:+PreserveFramePointer. Every function
 * is loaded with perfinject__load_opts(): a line table into jitdemo.src
 * (its operations inlined from step()) and the .eh_frame of what was
 * emitted. -o omits the frame pointers: the CFI alone describes the
 * frames then.
 *
 * With -c, before the threads start, <cold> more functions are loaded and
 * stay live to the end, as the bulk of a JVM's or V8's code cache does:
 * 64 bytes each, back to back in one heap, with names as long as Java
 * method descriptors. They never run; the threads' code comes after them
 * in the registry. With -s each has a line table too (a row every 16
 * bytes, in its class's .java file, as a JVM's methods have) and its
 * unwind information.
 *
 * Once every thread has its first function loaded (and the cold ones are
 * live), jitdemo says so on its standard output, in a line with "threads
 * running": a test that attaches a profiler waits for that line.
 *
 * With -F, while each function is loaded, a child process forked then
 * runs the code it inherited for half the function's time; its interval
 * is in the log under its own pid.
 *
 * The log (-l) is the ground truth a test compares a profile with:
 *
 *	# jitdemo pid=<pid> backends=0x<mask> threads=<t> rounds=<r> ...
 *	<tid> <start_ns> <end_ns> <addr> <len> <name>
 *	...
 *
 * Lines starting with '#' are comments; the first one gives the process
 * id (the perf-<pid>.map and jit-<pid>.dump file names), and one for each
 * function a thread compiled gives its bytes:
 *
 *	# code <tid> <name> <the code's bytes, two hex digits each>
 *
 * Every other line
 * is one execution interval: thread <tid> (decimal, as gettid(2))
 * executed the code called <name> at [<addr>, <addr> + <len>) (<addr> in
 * hex with 0x, <len> in decimal), and between <start_ns> and <end_ns>
 * (CLOCK_MONOTONIC, decimal nanoseconds) that range held that code and
 * nothing else, reported loaded before <start_ns> and not unloaded or
 * moved away before <end_ns>. So every sample of this process taken in
 * [<start_ns>, <end_ns>] at an address in the range must be attributed
 * to <name>. Slots belong to one thread, so the intervals of one address
 * never overlap in one process (a child forked with -F runs its copy of
 * the code under its own pid). Names are unique per function (thread
 * and number), and the same name always denotes the same code bytes.
 *
 * With -s, each thread's jit:run and jit:mix are logged too, with an
 * interval from their load to their unload at the thread's end.
 *
 * Exit status: 0 when done, 1 on an error (a failed library call or a
 * function computing a wrong result), 2 for bad usage, 77 when not
 * built for x86-64.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <perfinject/perfinject.h>

#if defined(__x86_64__)

#define NR_SLOTS	3		/* code slots per thread */
#define MAX_OPS		8		/* operations in a loop body */
#define MAX_CODE	256		/* bytes of one function */
#define CALL_ITERS	(1U << 12)	/* loop iterations per call */
#define CHECK_ITERS	1000U		/* iterations of the self-check */
#define MAX_TOTAL_MS	(10 * 60 * 1000)
#define MAX_ROWS	(8 + MAX_OPS)	/* line table rows of one function */
#define MAX_CFI		32		/* bytes of one FDE's instructions */
#define MAX_EH_FRAME	96		/* CIE, FDE and terminator */
#define EH_FRAME_HDR	20		/* with a table of one FDE */
#define RUN_CALLS	4U		/* calls of a function per jit:run */
#define MIX_K		0x5bd1e995U	/* jit:mix: x * MIX_K + c */
#define MIX_OFFSET	128		/* of jit:mix in a thread's fixed page */

/* Where the constructs of jitdemo.src are, for the line tables. */
#define SRC_RUN		10		/* def run(f, calls): */
#define SRC_MIX		16		/* def mix(x, c): */
#define SRC_STEP	19		/* inline def step(x, c): */
#define SRC_NAME	30		/* def NAME(n): */

enum jit_op_kind {
	OP_ADD,		/* rax += imm32 */
	OP_IMUL,	/* rax *= imm32 */
	OP_XOR,		/* rax ^= imm32 */
	OP_ROL,		/* rax = rol(rax, imm & 63) */
	OP_ROR,		/* rax = ror(rax, imm & 63) */
	OP_LEA3,	/* rax *= 3 */
	OP_XORSHIFT,	/* rax ^= rax >> (imm & 63) */
	OP_NOT,		/* rax = ~rax */
	OP_SUBCNT,	/* rax -= rcx (the loop counter) */
	NR_OP_KINDS,
};

struct jit_op {
	enum jit_op_kind	kind;
	uint32_t		imm;
};

/* From code offset @off on, the code comes from jitdemo.src:@line. */
struct src_row {
	uint16_t	off;
	uint16_t	line;
	uint16_t	inlined;	/* the line in step(), or 0 */
};

struct jit_func {
	char		name[32];
	uint64_t	seed;		/* rax on entry */
	unsigned int	nr_ops;
	struct jit_op	ops[MAX_OPS];
	size_t		len;
	unsigned char	code[MAX_CODE];
	/* -s: the line table and the unwind information. */
	unsigned int	nr_rows;
	struct src_row	rows[MAX_ROWS];
	size_t		cfi_len, cfi_at;	/* cfi_at: code offset */
	unsigned char	cfi[MAX_CFI];		/* the FDE's instructions */
	size_t		eh_frame_len;
	unsigned char	eh_frame[MAX_EH_FRAME];
	unsigned char	eh_frame_hdr[EH_FRAME_HDR];
};

typedef uint64_t (*jit_fn)(uint64_t iterations);
typedef uint64_t (*jit_run_fn)(jit_fn fn, uint64_t calls);

struct interval {
	pid_t		tid;
	uint64_t	start_ns;
	uint64_t	end_ns;
	uint64_t	addr;
	uint64_t	len;
	const char	*name;
};

struct worker {
	pthread_t		thread;
	unsigned int		nr;
	unsigned char		*slots;		/* NR_SLOTS pages */
	unsigned char		*fixed;		/* -s: jit:run and jit:mix */
	struct jit_func		run, mix;	/* -s */
	const struct jit_func	*funcs;		/* this thread's -f functions */
	pid_t			tid;
	struct interval		*log;
	size_t			log_len;
	size_t			log_cap;
	unsigned long		loads, moves;
	uint64_t		sink;
	int			err;
	bool			ready;		/* counted in nr_ready */
};

static struct perfinject *pi;
static unsigned int nr_rounds = 3, nr_funcs = 4, nr_cold;
static uint64_t duration_ns = 10 * 1000000ULL;
static bool move_mode, fork_mode, stack_mode, omit_fp;
/* -k: the last function of the last round runs until SIGINT or SIGTERM. */
static bool keep_last;
/* -s: jitdemo.src next to the program, as its line tables name it. */
static char src_path[PATH_MAX] = "jitdemo.src";
/* SIGINT or SIGTERM: finish the function running, log it, and stop. */
static volatile sig_atomic_t stop;
static long page_size;
/* Workers with their first function loaded, or ended before they had one. */
static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static unsigned int nr_ready;

static const char *const greek[] = {
	"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
	"iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho",
	"sigma", "tau", "upsilon", "phi", "chi", "psi", "omega",
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NR_GREEK	ARRAY_SIZE(greek)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* splitmix64: the same function number always yields the same code. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void emit(struct jit_func *f, const void *bytes, size_t n)
{
	memcpy(f->code + f->len, bytes, n);
	f->len += n;
}

static void emit_u8(struct jit_func *f, uint8_t v)
{
	emit(f, &v, 1);
}

static void emit_u32(struct jit_func *f, uint32_t v)
{
	emit(f, &v, 4);	/* x86 is little-endian, like the host */
}

/* -s: the code from here on comes from @line (and step()'s @inlined). */
static void src_line(struct jit_func *f, unsigned int line,
		     unsigned int inlined)
{
	struct src_row *last = f->nr_rows ? &f->rows[f->nr_rows - 1] : NULL;

	if (last && last->line == line && last->inlined == inlined)
		return;
	if (!last || last->off != f->len)
		last = &f->rows[f->nr_rows++];
	*last = (struct src_row){
		.off = f->len, .line = line, .inlined = inlined,
	};
}

/* DWARF register numbers (x86-64 psABI) and call frame instructions. */
enum {
	DW_RBX = 3, DW_RBP = 6, DW_RSP = 7, DW_R12 = 12, DW_R13 = 13,
	DW_RA = 16,
};
#define DW_CFA_advance_loc	0x40
#define DW_CFA_offset		0x80
#define DW_CFA_advance_loc1	0x02
#define DW_CFA_def_cfa		0x0c
#define DW_CFA_def_cfa_register	0x0d
#define DW_CFA_def_cfa_offset	0x0e

static void cfi_u8(struct jit_func *f, uint8_t v)
{
	f->cfi[f->cfi_len++] = v;
}

/* The rule that follows holds after the instruction just emitted. */
static void cfi_advance(struct jit_func *f)
{
	size_t delta = f->len - f->cfi_at;

	if (delta < 64) {
		if (delta)
			cfi_u8(f, DW_CFA_advance_loc | delta);
	} else {
		cfi_u8(f, DW_CFA_advance_loc1);
		cfi_u8(f, delta);
	}
	f->cfi_at = f->len;
}

/* The canonical frame address is @reg + @offset (both under 128). */
static void cfi_def_cfa(struct jit_func *f, uint8_t reg, uint8_t offset)
{
	cfi_advance(f);
	cfi_u8(f, DW_CFA_def_cfa);
	cfi_u8(f, reg);
	cfi_u8(f, offset);
}

static void cfi_cfa_offset(struct jit_func *f, uint8_t offset)
{
	cfi_advance(f);
	cfi_u8(f, DW_CFA_def_cfa_offset);
	cfi_u8(f, offset);
}

static void cfi_cfa_register(struct jit_func *f, uint8_t reg)
{
	cfi_advance(f);
	cfi_u8(f, DW_CFA_def_cfa_register);
	cfi_u8(f, reg);
}

/* @reg is saved at CFA - @offset. */
static void cfi_saved(struct jit_func *f, uint8_t reg, uint8_t offset)
{
	cfi_advance(f);
	cfi_u8(f, DW_CFA_offset | reg);
	cfi_u8(f, offset / 8);	/* factored by the CIE's data alignment */
}

static void put_u32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);	/* the host's byte order, as the reader's */
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
 * -s: .eh_frame (a CIE, the function's FDE and a terminator) and
 * .eh_frame_hdr with a table of that FDE, laid out as jitdump's
 * JIT_CODE_UNWINDING_INFO has them: .eh_frame starts at the first 8-byte
 * boundary after the code, .eh_frame_hdr right after it. Every address
 * in them is relative, so the bytes do not depend on where the code is.
 */
static void build_eh_frame(struct jit_func *f)
{
	static const unsigned char cie[] = {
		0x14, 0, 0, 0,		/* length */
		0, 0, 0, 0,		/* CIE id */
		1,			/* version */
		'z', 'R', 0,		/* augmentation */
		1,			/* code alignment factor */
		0x78,			/* data alignment factor: -8 */
		DW_RA,			/* return address column */
		1,			/* augmentation data length */
		0x1b,			/* FDE addresses: pcrel | sdata4 */
		DW_CFA_def_cfa, DW_RSP, 8,	/* CFA = rsp + 8 on entry */
		DW_CFA_offset | DW_RA, 1,	/* return address at CFA - 8 */
		0, 0,			/* DW_CFA_nop to 24 bytes */
	};
	size_t fde = sizeof(cie), fde_len, eh_len, code_to_eh;
	unsigned char *eh = f->eh_frame, *hdr = f->eh_frame_hdr;

	/* CIE pointer, initial location, range, augmentation, rules. */
	fde_len = align_up(4 + 4 + 4 + 1 + f->cfi_len, 4);
	eh_len = fde + 4 + fde_len + 4;
	code_to_eh = align_up(f->len, 8);
	memset(eh, 0, sizeof(f->eh_frame));
	memcpy(eh, cie, sizeof(cie));
	put_u32(eh + fde, fde_len);
	put_u32(eh + fde + 4, fde + 4);		/* back to the CIE */
	put_u32(eh + fde + 8, -(uint32_t)(code_to_eh + fde + 8));
	put_u32(eh + fde + 12, f->len);
	eh[fde + 16] = 0;			/* augmentation data length */
	memcpy(eh + fde + 17, f->cfi, f->cfi_len);
	/* The rest is DW_CFA_nop padding, then the zero terminator. */
	f->eh_frame_len = eh_len;

	hdr[0] = 1;		/* version */
	hdr[1] = 0x1b;		/* eh_frame_ptr: pcrel | sdata4 */
	hdr[2] = 0x03;		/* fde_count: udata4 */
	hdr[3] = 0x3b;		/* table: datarel | sdata4 */
	put_u32(hdr + 4, -(uint32_t)(eh_len + 4));
	put_u32(hdr + 8, 1);
	put_u32(hdr + 12, -(uint32_t)(code_to_eh + eh_len));
	put_u32(hdr + 16, -(uint32_t)(eh_len - fde));
}

/* -s: "push rbp; mov rbp, rsp" unless -o, with its CFI. */
static void emit_prologue(struct jit_func *f)
{
	static const uint8_t mov_rbp_rsp[] = { 0x48, 0x89, 0xe5 };

	if (omit_fp)
		return;
	emit_u8(f, 0x55);				/* push rbp */
	cfi_cfa_offset(f, 16);
	cfi_saved(f, DW_RBP, 16);
	emit(f, mov_rbp_rsp, sizeof(mov_rbp_rsp));
	cfi_cfa_register(f, DW_RBP);
}

static void emit_epilogue(struct jit_func *f)
{
	if (!omit_fp) {
		emit_u8(f, 0x5d);			/* pop rbp */
		cfi_def_cfa(f, DW_RSP, 8);
	}
	emit_u8(f, 0xc3);				/* ret */
}

static void emit_op(struct jit_func *f, const struct jit_op *op)
{
	static const uint8_t add[] = { 0x48, 0x05 };		/* add rax, imm32 */
	static const uint8_t imul[] = { 0x48, 0x69, 0xc0 };	/* imul rax, rax, imm32 */
	static const uint8_t xor[] = { 0x48, 0x35 };		/* xor rax, imm32 */
	static const uint8_t rol[] = { 0x48, 0xc1, 0xc0 };	/* rol rax, imm8 */
	static const uint8_t ror[] = { 0x48, 0xc1, 0xc8 };	/* ror rax, imm8 */
	static const uint8_t lea3[] = { 0x48, 0x8d, 0x04, 0x40 }; /* lea rax, [rax+rax*2] */
	static const uint8_t mov_rdx[] = { 0x48, 0x89, 0xc2 };	/* mov rdx, rax */
	static const uint8_t shr_rdx[] = { 0x48, 0xc1, 0xea };	/* shr rdx, imm8 */
	static const uint8_t xor_rdx[] = { 0x48, 0x31, 0xd0 };	/* xor rax, rdx */
	static const uint8_t not[] = { 0x48, 0xf7, 0xd0 };	/* not rax */
	static const uint8_t sub_rcx[] = { 0x48, 0x29, 0xc8 };	/* sub rax, rcx */

	switch (op->kind) {
	case OP_ADD:
		emit(f, add, sizeof(add));
		emit_u32(f, op->imm);
		break;
	case OP_IMUL:
		emit(f, imul, sizeof(imul));
		emit_u32(f, op->imm);
		break;
	case OP_XOR:
		emit(f, xor, sizeof(xor));
		emit_u32(f, op->imm);
		break;
	case OP_ROL:
		emit(f, rol, sizeof(rol));
		emit_u8(f, op->imm & 63);
		break;
	case OP_ROR:
		emit(f, ror, sizeof(ror));
		emit_u8(f, op->imm & 63);
		break;
	case OP_LEA3:
		emit(f, lea3, sizeof(lea3));
		break;
	case OP_XORSHIFT:
		emit(f, mov_rdx, sizeof(mov_rdx));
		emit(f, shr_rdx, sizeof(shr_rdx));
		emit_u8(f, op->imm & 63);
		emit(f, xor_rdx, sizeof(xor_rdx));
		break;
	case OP_NOT:
		emit(f, not, sizeof(not));
		break;
	case OP_SUBCNT:
		emit(f, sub_rcx, sizeof(sub_rcx));
		break;
	case NR_OP_KINDS:
		break;
	}
}

/*
 * uint64_t f(uint64_t n): rax = seed; for (rcx = n; rcx; rcx--) body;
 * return rax. System V ABI: n in rdi, result in rax; rcx and rdx are
 * caller-saved, so the code needs no prologue.
 */
static void jit_compile(struct jit_func *f, unsigned int id,
			const unsigned char *mix)
{
	static const uint8_t mov_rax[] = { 0x48, 0xb8 };	/* mov rax, imm64 */
	static const uint8_t mov_rcx_rdi[] = { 0x48, 0x89, 0xf9 }; /* mov rcx, rdi */
	static const uint8_t test_rcx[] = { 0x48, 0x85, 0xc9 };	/* test rcx, rcx */
	static const uint8_t dec_rcx[] = { 0x48, 0xff, 0xc9 };	/* dec rcx */
	static const uint8_t jnz32[] = { 0x0f, 0x85 };		/* jnz rel32 */
	static const uint8_t mov_r8[] = { 0x49, 0xb8 };		/* mov r8, imm64 */
	static const uint8_t call_r8[] = { 0x41, 0xff, 0xd0 };	/* call r8 */
	uint64_t state = id, mix_addr = (uintptr_t)mix;
	size_t jz_at, loop_at;
	unsigned int i;

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "jit:%s", greek[id % NR_GREEK]);
	if (id >= NR_GREEK)
		snprintf(f->name + strlen(f->name),
			 sizeof(f->name) - strlen(f->name), "%u",
			 id / (unsigned int)NR_GREEK + 1);

	f->seed = next_random(&state);
	f->nr_ops = 3 + id % (MAX_OPS - 2);
	for (i = 0; i < f->nr_ops; i++) {
		f->ops[i].kind = next_random(&state) % NR_OP_KINDS;
		f->ops[i].imm = next_random(&state);
		if (f->ops[i].kind == OP_IMUL)
			f->ops[i].imm |= 1;	/* odd: keeps all the bits alive */
	}

	/* With -s, the line table follows jitdemo.src's "def NAME(n):". */
	if (stack_mode) {
		src_line(f, SRC_NAME, 0);
		emit_prologue(f);
		src_line(f, SRC_NAME + 1, 0);		/* x = SEED */
	}
	emit(f, mov_rax, sizeof(mov_rax));
	emit(f, &f->seed, 8);
	if (stack_mode) {
		emit(f, mov_r8, sizeof(mov_r8));	/* r8: jit:mix */
		emit(f, &mix_addr, 8);
		src_line(f, SRC_NAME + 2, 0);		/* for c = n down to 1 */
	}
	emit(f, mov_rcx_rdi, sizeof(mov_rcx_rdi));
	emit(f, test_rcx, sizeof(test_rcx));
	emit_u8(f, 0x74);			/* jz done (rel8, patched) */
	jz_at = f->len;
	emit_u8(f, 0);
	loop_at = f->len;
	for (i = 0; i < f->nr_ops; i++) {
		if (stack_mode)			/* x = step(x, c): OPi */
			src_line(f, SRC_NAME + 3, SRC_STEP + 1 + i);
		emit_op(f, &f->ops[i]);
	}
	if (stack_mode) {
		src_line(f, SRC_NAME + 4, 0);		/* x = mix(x, c) */
		emit(f, call_r8, sizeof(call_r8));
		src_line(f, SRC_NAME + 2, 0);
	}
	emit(f, dec_rcx, sizeof(dec_rcx));
	emit(f, jnz32, sizeof(jnz32));
	emit_u32(f, (uint32_t)(loop_at - (f->len + 4)));
	f->code[jz_at] = f->len - (jz_at + 1);
	if (stack_mode) {
		src_line(f, SRC_NAME + 5, 0);		/* return x */
		emit_epilogue(f);
		build_eh_frame(f);
	} else {
		emit_u8(f, 0xc3);		/* done: ret */
	}
}

/* -s: jit:mix, x * MIX_K + c: "imul rax, rax, MIX_K; add rax, rcx". */
static void jit_compile_mix(struct jit_func *f)
{
	static const uint8_t imul[] = { 0x48, 0x69, 0xc0 };
	static const uint8_t add_rcx[] = { 0x48, 0x01, 0xc8 };

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "jit:mix");
	src_line(f, SRC_MIX, 0);
	emit_prologue(f);
	src_line(f, SRC_MIX + 1, 0);
	emit(f, imul, sizeof(imul));
	emit_u32(f, MIX_K);
	emit(f, add_rcx, sizeof(add_rcx));
	emit_epilogue(f);
	build_eh_frame(f);
}

/*
 * -s: jit:run(fn, calls) returns the sum of @calls calls fn(CALL_ITERS).
 * It keeps fn, calls and the result in callee-saved rbx, r12 and r13,
 * and keeps the stack 16-byte aligned at its calls, as the ABI asks.
 */
static void jit_compile_run(struct jit_func *f)
{
	static const uint8_t push_r12[] = { 0x41, 0x54 };
	static const uint8_t push_r13[] = { 0x41, 0x55 };
	static const uint8_t sub_rsp8[] = { 0x48, 0x83, 0xec, 0x08 };
	static const uint8_t mov_rbx_rdi[] = { 0x48, 0x89, 0xfb };
	static const uint8_t mov_r12_rsi[] = { 0x49, 0x89, 0xf4 };
	static const uint8_t xor_r13[] = { 0x4d, 0x31, 0xed };
	static const uint8_t call_rbx[] = { 0xff, 0xd3 };
	static const uint8_t add_r13_rax[] = { 0x49, 0x01, 0xc5 };
	static const uint8_t dec_r12[] = { 0x49, 0xff, 0xcc };
	static const uint8_t mov_rax_r13[] = { 0x4c, 0x89, 0xe8 };
	static const uint8_t add_rsp8[] = { 0x48, 0x83, 0xc4, 0x08 };
	static const uint8_t pop_r13[] = { 0x41, 0x5d };
	static const uint8_t pop_r12[] = { 0x41, 0x5c };
	uint8_t cfa = 8;	/* without a frame pointer: rsp + cfa */
	size_t loop_at;

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "jit:run");
	src_line(f, SRC_RUN, 0);
	emit_prologue(f);
	/* Saved below the return address (and rbp): CFA - 24, -32, -40. */
	emit_u8(f, 0x53);				/* push rbx */
	if (omit_fp)
		cfi_cfa_offset(f, cfa += 8);
	cfi_saved(f, DW_RBX, omit_fp ? 16 : 24);
	emit(f, push_r12, sizeof(push_r12));
	if (omit_fp)
		cfi_cfa_offset(f, cfa += 8);
	cfi_saved(f, DW_R12, omit_fp ? 24 : 32);
	emit(f, push_r13, sizeof(push_r13));
	if (omit_fp)
		cfi_cfa_offset(f, cfa += 8);
	cfi_saved(f, DW_R13, omit_fp ? 32 : 40);
	if (!omit_fp)		/* rbp and three registers: realign */
		emit(f, sub_rsp8, sizeof(sub_rsp8));
	src_line(f, SRC_RUN + 1, 0);			/* x = 0 */
	emit(f, mov_rbx_rdi, sizeof(mov_rbx_rdi));
	emit(f, mov_r12_rsi, sizeof(mov_r12_rsi));
	emit(f, xor_r13, sizeof(xor_r13));
	loop_at = f->len;
	src_line(f, SRC_RUN + 3, 0);			/* x = x + f(4096) */
	emit_u8(f, 0xbf);				/* mov edi, imm32 */
	emit_u32(f, CALL_ITERS);
	emit(f, call_rbx, sizeof(call_rbx));
	emit(f, add_r13_rax, sizeof(add_r13_rax));
	src_line(f, SRC_RUN + 2, 0);			/* repeat calls: */
	emit(f, dec_r12, sizeof(dec_r12));
	emit_u8(f, 0x75);				/* jnz loop */
	emit_u8(f, (uint8_t)(loop_at - (f->len + 1)));
	src_line(f, SRC_RUN + 4, 0);			/* return x */
	emit(f, mov_rax_r13, sizeof(mov_rax_r13));
	if (!omit_fp)
		emit(f, add_rsp8, sizeof(add_rsp8));
	emit(f, pop_r13, sizeof(pop_r13));
	if (omit_fp)
		cfi_cfa_offset(f, cfa -= 8);
	emit(f, pop_r12, sizeof(pop_r12));
	if (omit_fp)
		cfi_cfa_offset(f, cfa -= 8);
	emit_u8(f, 0x5b);				/* pop rbx */
	if (omit_fp)
		cfi_cfa_offset(f, cfa -= 8);
	emit_epilogue(f);
	build_eh_frame(f);
}

/* What the code computes, to check the emitted bytes. */
static uint64_t jit_interpret(const struct jit_func *f, uint64_t n)
{
	uint64_t rax = f->seed, rcx;
	unsigned int i, s;

	for (rcx = n; rcx; rcx--) {
		for (i = 0; i < f->nr_ops; i++) {
			const struct jit_op *op = &f->ops[i];
			uint64_t imm = (uint64_t)(int64_t)(int32_t)op->imm;

			s = op->imm & 63;
			switch (op->kind) {
			case OP_ADD:
				rax += imm;
				break;
			case OP_IMUL:
				rax *= imm;
				break;
			case OP_XOR:
				rax ^= imm;
				break;
			case OP_ROL:
				rax = s ? rax << s | rax >> (64 - s) : rax;
				break;
			case OP_ROR:
				rax = s ? rax >> s | rax << (64 - s) : rax;
				break;
			case OP_LEA3:
				rax *= 3;
				break;
			case OP_XORSHIFT:
				rax ^= rax >> s;
				break;
			case OP_NOT:
				rax = ~rax;
				break;
			case OP_SUBCNT:
				rax -= rcx;
				break;
			case NR_OP_KINDS:
				break;
			}
		}
		if (stack_mode)		/* jit:mix */
			rax = rax * MIX_K + rcx;
	}
	return rax;
}

static int slot_protect(unsigned char *slot, int prot)
{
	if (mprotect(slot, page_size, prot)) {
		perror("mprotect");
		return -errno;
	}
	return 0;
}

/* W^X: the page is writable only while nothing may execute it. */
static int slot_write(unsigned char *slot, const void *code, size_t len)
{
	int err;

	err = slot_protect(slot, PROT_READ | PROT_WRITE);
	if (err)
		return err;
	memcpy(slot, code, len);
	__builtin___clear_cache((char *)slot, (char *)slot + len);
	return slot_protect(slot, PROT_READ | PROT_EXEC);
}

static int log_interval(struct worker *w, pid_t tid, uint64_t start,
			uint64_t end, const unsigned char *addr,
			const struct jit_func *f)
{
	struct interval *iv;

	if (w->log_len == w->log_cap) {
		size_t cap = w->log_cap ? 2 * w->log_cap : 64;

		iv = realloc(w->log, cap * sizeof(*iv));
		if (!iv)
			return -ENOMEM;
		w->log = iv;
		w->log_cap = cap;
	}
	w->log[w->log_len++] = (struct interval){
		.tid		= tid,
		.start_ns	= start,
		.end_ns		= end,
		.addr		= (uintptr_t)addr,
		.len		= f->len,
		.name		= f->name,
	};
	return 0;
}

/* Once per worker: its first function is live, or it will have none. */
static void worker_ready(struct worker *w)
{
	if (w->ready)
		return;
	w->ready = true;
	pthread_mutex_lock(&ready_lock);
	nr_ready++;
	pthread_cond_signal(&ready_cond);
	pthread_mutex_unlock(&ready_lock);
}

static jit_fn as_fn(unsigned char *slot);

/*
 * Call @fn until @until; return the time the last call returned. With
 * -s, through the thread's jit:run.
 */
static uint64_t run_until(struct worker *w, jit_fn fn, uint64_t until)
{
	jit_run_fn run = NULL;
	uint64_t t;

	if (stack_mode)
		memcpy(&run, &w->fixed, sizeof(run));
	do {
		w->sink += run ? run(fn, RUN_CALLS) : fn(CALL_ITERS);
		t = now_ns();
	} while (t < until && !stop);
	return t;
}

static jit_fn as_fn(unsigned char *slot)
{
	jit_fn fn;

	/* ISO C has no object-to-function pointer cast; POSIX allows it. */
	memcpy(&fn, &slot, sizeof(fn));
	return fn;
}

/*
 * -F: a child process, forked while the code is loaded, runs the code it
 * inherited (which it never reports: to perf, it is the parent's, copied
 * at the fork) for half the function's time, and sends its interval back
 * through a pipe, for the log.
 */
struct forked {
	pid_t	pid;
	int	fd;
};

struct forked_interval {
	pid_t		tid;
	uint64_t	start, end;
};

static int fork_start(struct worker *w, struct forked *child, jit_fn fn)
{
	struct forked_interval iv;
	int fds[2];

	if (pipe(fds))
		return -errno;
	child->pid = fork();
	if (child->pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (!child->pid) {
		close(fds[0]);
		iv.tid = getpid();
		iv.start = now_ns();
		iv.end = run_until(w, fn, iv.start + duration_ns / 2);
		_exit(write(fds[1], &iv, sizeof(iv)) == sizeof(iv) ? 0 : 1);
	}
	close(fds[1]);
	child->fd = fds[0];
	return 0;
}

static int fork_finish(struct worker *w, struct forked *child,
		       const unsigned char *addr, const struct jit_func *f)
{
	struct forked_interval iv;
	ssize_t n;
	int status;

	n = read(child->fd, &iv, sizeof(iv));
	close(child->fd);
	if (waitpid(child->pid, &status, 0) != child->pid || n != sizeof(iv) ||
	    !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "jitdemo: the forked child failed\n");
		return -ECHILD;
	}
	return log_interval(w, iv.tid, iv.start, iv.end, addr, f);
}

/*
 * Report @f loaded at @addr; with -s, with its line table into
 * jitdemo.src and its unwind information.
 */
static int load_code(const struct jit_func *f, const unsigned char *addr,
		     uint64_t code_index)
{
	struct perfinject_frame frames[MAX_ROWS][2];
	struct perfinject_line lines[MAX_ROWS];
	unsigned int i;
	int err;

	if (!stack_mode) {
		err = perfinject__load(pi, f->name, (uintptr_t)addr, f->len,
				       code_index);
		goto out;
	}
	for (i = 0; i < f->nr_rows; i++) {
		const struct src_row *row = &f->rows[i];
		struct perfinject_frame *fr = frames[i];

		/* Innermost first: step()'s line, then the function's. */
		if (row->inlined)
			*fr++ = (struct perfinject_frame){
				.file = src_path, .function = "step",
				.line = row->inlined,
			};
		*fr = (struct perfinject_frame){
			.file = src_path, .line = row->line,
		};
		lines[i] = (struct perfinject_line){
			.addr = (uintptr_t)addr + row->off,
			.frames = frames[i],
			.nr_frames = row->inlined ? 2 : 1,
		};
	}
	PERFINJECT_LOAD_OPTS(opts,
		.kind = PERFINJECT_KIND_FUNCTION,
		.lines = lines,
		.nr_lines = f->nr_rows,
		.eh_frame = f->eh_frame,
		.eh_frame_sz = f->eh_frame_len,
		.eh_frame_hdr = f->eh_frame_hdr,
		.eh_frame_hdr_sz = sizeof(f->eh_frame_hdr),
	);
	err = perfinject__load_opts(pi, f->name, (uintptr_t)addr, f->len,
				    code_index, &opts);
out:
	if (err)
		fprintf(stderr, "perfinject__load %s: %s\n", f->name,
			strerror(-err));
	return err;
}

static int run_one(struct worker *w, pid_t tid, const struct jit_func *f,
		   unsigned int *cursor, uint64_t code_index, bool last)
{
	unsigned char *addr = w->slots + (size_t)*cursor * page_size;
	struct forked child = { .pid = -1, .fd = -1 };
	unsigned char *to;
	uint64_t start, end, got, want;
	int err;

	err = slot_write(addr, f->code, f->len);
	if (err)
		return err;
	err = load_code(f, addr, code_index);
	if (err)
		return err;
	w->loads++;
	start = now_ns();
	worker_ready(w);

	if (stack_mode) {
		jit_run_fn run;

		/* Only jit:run calls the functions: their callers are JIT code. */
		memcpy(&run, &w->fixed, sizeof(run));
		got = run(as_fn(addr), 1);
		want = jit_interpret(f, CALL_ITERS);
	} else {
		got = as_fn(addr)(CHECK_ITERS);
		want = jit_interpret(f, CHECK_ITERS);
	}
	if (got != want) {
		fprintf(stderr, "%s computed %#" PRIx64 ", want %#" PRIx64 "\n",
			f->name, got, want);
		return -EIO;
	}

	if (move_mode) {
		*cursor = (*cursor + 1) % NR_SLOTS;
		to = w->slots + (size_t)*cursor * page_size;
		run_until(w, as_fn(addr), start + duration_ns / 2);
		err = slot_write(to, f->code, f->len);
		if (err)
			return err;
		end = now_ns();
		err = perfinject__move(pi, (uintptr_t)addr, (uintptr_t)to);
		if (err) {
			fprintf(stderr, "perfinject__move %s: %s\n", f->name,
				strerror(-err));
			return err;
		}
		w->moves++;
		err = log_interval(w, tid, start, end, addr, f);
		if (err)
			return err;
		/* Stale code must not run, and this slot is free again. */
		err = slot_protect(addr, PROT_NONE);
		if (err)
			return err;
		addr = to;
		start = now_ns();
	}

	if (fork_mode) {
		err = fork_start(w, &child, as_fn(addr));
		if (err)
			return err;
	}
	run_until(w, as_fn(addr), keep_last && last ? UINT64_MAX :
		  start + (move_mode ? duration_ns / 2 : duration_ns));
	end = now_ns();
	if (fork_mode) {
		err = fork_finish(w, &child, addr, f);
		if (err)
			return err;
	}
	err = perfinject__unload(pi, (uintptr_t)addr);
	if (err) {
		fprintf(stderr, "perfinject__unload %s: %s\n", f->name,
			strerror(-err));
		return err;
	}
	err = log_interval(w, tid, start, end, addr, f);
	if (err)
		return err;
	/* The next function goes elsewhere, so this address sees others. */
	*cursor = (*cursor + 1) % NR_SLOTS;
	return slot_protect(addr, PROT_NONE);
}

/*
 * -s: write the thread's jit:run and jit:mix into its fixed page, check
 * them and report them; they stay until the thread ends.
 */
static int fixed_load(struct worker *w, uint64_t *seq)
{
	unsigned char *mix = w->fixed + MIX_OFFSET;
	int err;

	err = slot_protect(w->fixed, PROT_READ | PROT_WRITE);
	if (err)
		return err;
	memcpy(w->fixed, w->run.code, w->run.len);
	memcpy(mix, w->mix.code, w->mix.len);
	__builtin___clear_cache((char *)w->fixed, (char *)mix + w->mix.len);
	err = slot_protect(w->fixed, PROT_READ | PROT_EXEC);
	if (err)
		return err;
	err = load_code(&w->run, w->fixed, (uint64_t)(w->nr + 1) << 32 | ++*seq);
	if (!err)
		err = load_code(&w->mix, mix, (uint64_t)(w->nr + 1) << 32 | ++*seq);
	if (err)
		return err;
	w->loads += 2;
	return 0;
}

static int fixed_unload(struct worker *w, pid_t tid, uint64_t start)
{
	uint64_t end = now_ns();
	int err;

	err = perfinject__unload(pi, (uintptr_t)w->fixed);
	if (!err)
		err = perfinject__unload(pi, (uintptr_t)w->fixed + MIX_OFFSET);
	if (err) {
		fprintf(stderr, "perfinject__unload: %s\n", strerror(-err));
		return err;
	}
	err = log_interval(w, tid, start, end, w->fixed, &w->run);
	if (!err)
		err = log_interval(w, tid, start, end, w->fixed + MIX_OFFSET,
				   &w->mix);
	if (!err)
		err = slot_protect(w->fixed, PROT_NONE);
	return err;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	pid_t tid = syscall(SYS_gettid);
	unsigned int round, i, cursor = 0;
	uint64_t seq = 0, start = 0;

	w->tid = tid;
	if (stack_mode) {
		w->err = fixed_load(w, &seq);
		start = now_ns();
	}
	for (round = 0; round < nr_rounds && !w->err && !stop; round++) {
		for (i = 0; i < nr_funcs && !w->err && !stop; i++) {
			/* A fresh compilation id for every load. */
			uint64_t code_index = (uint64_t)(w->nr + 1) << 32 | ++seq;

			w->err = run_one(w, tid, &w->funcs[i], &cursor,
					 code_index,
					 round + 1 == nr_rounds &&
					 i + 1 == nr_funcs);
		}
	}
	if (stack_mode && w->loads) {
		int err = fixed_unload(w, tid, start);

		if (!w->err)
			w->err = err;
	}
	worker_ready(w);
	return NULL;
}

#define COLD_SIZE	64
#define COLD_ROWS	(COLD_SIZE / 16)

/*
 * -s: the line table of cold function @i at @addr, in @lines (COLD_ROWS)
 * and @frames, naming @file; lines 10 + 20 * method and on.
 */
static void cold_lines(unsigned int i, uintptr_t addr, const char *file,
		       struct perfinject_line *lines,
		       struct perfinject_frame *frames)
{
	unsigned int r;

	for (r = 0; r < COLD_ROWS; r++) {
		frames[r] = (struct perfinject_frame){
			.file = file, .line = 10 + 20 * (i % 16) + r,
		};
		lines[r] = (struct perfinject_line){
			.addr = addr + 16 * r, .frames = &frames[r],
			.nr_frames = 1,
		};
	}
}

/*
 * Load @nr functions that never run, back to back in a heap of their own;
 * returns the heap (unmapped by the caller, after perfinject__free()).
 */
static unsigned char *load_cold(unsigned int nr, size_t *heap_len)
{
	struct perfinject_frame frames[COLD_ROWS];
	struct perfinject_line lines[COLD_ROWS];
	struct jit_func *tmpl = NULL;
	unsigned char *heap;
	char name[128], file[64];
	unsigned int i;
	int err;

	*heap_len = ((size_t)nr * COLD_SIZE + page_size - 1) & ~(page_size - 1);
	heap = mmap(NULL, *heap_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (heap == MAP_FAILED) {
		perror("mmap");
		return NULL;
	}
	memset(heap, 0xcc, *heap_len);	/* int3 */
	if (mprotect(heap, *heap_len, PROT_READ | PROT_EXEC)) {
		perror("mprotect");
		goto fail;
	}
	if (stack_mode) {
		/*
		 * One .eh_frame serves them all: it is relative to the code,
		 * and the code keeps the CFA at rsp + 8 throughout.
		 */
		tmpl = calloc(1, sizeof(*tmpl));
		if (!tmpl) {
			perror("calloc");
			goto fail;
		}
		tmpl->len = COLD_SIZE;
		build_eh_frame(tmpl);
	}
	for (i = 0; i < nr; i++) {
		uintptr_t addr = (uintptr_t)heap + (size_t)i * COLD_SIZE;

		snprintf(name, sizeof(name),
			 "org.example.cold.Class%u.method%u(Ljava/lang/String;[Ljava/lang/Object;)Ljava/util/Map;",
			 i / 16, i % 16);
		if (tmpl) {
			snprintf(file, sizeof(file),
				 "org/example/cold/Class%u.java", i / 16);
			cold_lines(i, addr, file, lines, frames);
			PERFINJECT_LOAD_OPTS(opts,
				.kind = PERFINJECT_KIND_FUNCTION,
				.lines = lines,
				.nr_lines = COLD_ROWS,
				.eh_frame = tmpl->eh_frame,
				.eh_frame_sz = tmpl->eh_frame_len,
				.eh_frame_hdr = tmpl->eh_frame_hdr,
				.eh_frame_hdr_sz = sizeof(tmpl->eh_frame_hdr),
			);
			err = perfinject__load_opts(pi, name, addr, COLD_SIZE,
						    0, &opts);
		} else {
			err = perfinject__load(pi, name, addr, COLD_SIZE, 0);
		}
		if (err) {
			fprintf(stderr, "perfinject__load %s: %s\n", name,
				strerror(-err));
			goto fail;
		}
	}
	free(tmpl);
	return heap;
fail:
	free(tmpl);
	munmap(heap, *heap_len);
	return NULL;
}

static int parse_uint(const char *arg, unsigned int min, unsigned int max,
		      unsigned int *val)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		return -EINVAL;
	*val = v;
	return 0;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-t threads] [-r rounds] [-f functions] [-d ms] [-k] [-m] [-F]\n"
		"       [-c cold] [-s [-o]] [-l logfile]\n"
		"  -t  threads, each with its own code slots (1..256, default 1)\n"
		"  -r  rounds over the functions (1..10000, default 3)\n"
		"  -f  functions per thread (1..10000, default 4)\n"
		"  -d  milliseconds each function runs (1..60000, default 10)\n"
		"  -k  keep the last function of the last round running until\n"
		"      SIGINT or SIGTERM (for a profiler that attaches to the run)\n"
		"  -m  move each function to another address half-way\n"
		"  -F  fork a child that runs each function's inherited code\n"
		"  -c  cold functions loaded first and kept live (0..1000000)\n"
		"  -s  call stacks: jit:run calls each function, which calls jit:mix;\n"
		"      line tables into jitdemo.src and unwind information\n"
		"  -o  with -s, no frame pointers: only the unwind information\n"
		"  -l  write the ground-truth log of execution intervals\n"
		"SIGINT or SIGTERM ends the run early and cleanly: the functions\n"
		"running end their interval, are logged and unloaded.\n",
		prog);
}

/* -s: the line tables name jitdemo.src where it ships, next to us. */
static void src_path_init(void)
{
	char exe[PATH_MAX - 16];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return;
	slash[1] = 0;
	snprintf(src_path, sizeof(src_path), "%sjitdemo.src", exe);
	if (access(src_path, R_OK))
		snprintf(src_path, sizeof(src_path), "jitdemo.src");
}

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* "# code <tid> <name> <bytes in hex>": what @f is, as thread @tid ran it. */
static void log_code(FILE *out, pid_t tid, const struct jit_func *f)
{
	size_t i;

	fprintf(out, "# code %d %s ", (int)tid, f->name);
	for (i = 0; i < f->len; i++)
		fprintf(out, "%02x", f->code[i]);
	fputc('\n', out);
}

static int write_log(FILE *out, const struct worker *workers,
		     unsigned int nr_threads)
{
	unsigned int t;
	size_t i;

	fprintf(out, "# jitdemo pid=%d backends=0x%x", (int)getpid(),
		perfinject__backends(pi));
	fprintf(out, " threads=%u rounds=%u functions=%u duration_ms=%" PRIu64
		" move=%d cold=%u stacks=%d fp=%d\n", nr_threads, nr_rounds,
		nr_funcs, duration_ns / 1000000, move_mode, nr_cold,
		stack_mode, stack_mode && !omit_fp);
	for (t = 0; t < nr_threads; t++) {
		const struct worker *w = &workers[t];

		for (i = 0; i < nr_funcs; i++)
			log_code(out, w->tid, &w->funcs[i]);
		if (stack_mode) {
			log_code(out, w->tid, &w->run);
			log_code(out, w->tid, &w->mix);
		}
	}
	fprintf(out, "# tid start_ns end_ns addr len name\n");
	for (t = 0; t < nr_threads; t++) {
		for (i = 0; i < workers[t].log_len; i++) {
			const struct interval *iv = &workers[t].log[i];

			fprintf(out, "%d %" PRIu64 " %" PRIu64 " %#" PRIx64 " %" PRIu64 " %s\n",
				(int)iv->tid, iv->start_ns, iv->end_ns,
				iv->addr, iv->len, iv->name);
		}
	}
	return fflush(out) || ferror(out) ? -EIO : 0;
}

int main(int argc, char **argv)
{
	unsigned int nr_threads = 1, ms = 10, slot_pages, t, i;
	unsigned long loads = 0, moves = 0;
	struct jit_func *funcs = NULL;
	struct worker *workers = NULL;
	const char *log_path = NULL;
	unsigned char *arena = NULL, *cold = NULL;
	FILE *log = NULL;
	size_t arena_len = 0, cold_len = 0;
	uint64_t sink = 0;
	int opt, err = 0;
	PERFINJECT_OPTS(popts, .flags = PERFINJECT_F_REGISTRY_DATA);

	while ((opt = getopt(argc, argv, "t:r:f:d:kmFc:sol:h")) != -1) {
		switch (opt) {
		case 't':
			err = parse_uint(optarg, 1, 256, &nr_threads);
			break;
		case 'r':
			err = parse_uint(optarg, 1, 10000, &nr_rounds);
			break;
		case 'f':
			err = parse_uint(optarg, 1, 10000, &nr_funcs);
			break;
		case 'd':
			err = parse_uint(optarg, 1, 60000, &ms);
			break;
		case 'k':
			keep_last = true;
			break;
		case 'm':
			move_mode = true;
			break;
		case 'F':
			fork_mode = true;
			break;
		case 'c':
			err = parse_uint(optarg, 0, 1000000, &nr_cold);
			break;
		case 's':
			stack_mode = true;
			break;
		case 'o':
			omit_fp = true;
			break;
		case 'l':
			log_path = optarg;
			break;
		case 'h':
			usage(argv[0]);
			return 0;
		default:
			err = -EINVAL;
			break;
		}
		if (err)
			break;
	}
	/* Bound the run: each thread runs rounds * functions * ms. */
	if (err || optind != argc || (omit_fp && !stack_mode) ||
	    (uint64_t)nr_rounds * nr_funcs * ms > MAX_TOTAL_MS) {
		usage(argv[0]);
		return 2;
	}
	duration_ns = ms * 1000000ULL;
	page_size = sysconf(_SC_PAGESIZE);

	if (log_path) {
		log = fopen(log_path, "w");
		if (!log) {
			perror(log_path);
			return 1;
		}
	}

	/*
	 * Defaults: PERFINJECT_BACKENDS, else the kernel if it can. The
	 * registry keeps the line tables and CFI of -s too, for a profiler
	 * that attaches later.
	 */
	pi = perfinject__new(&popts);
	if (!pi) {
		perror("perfinject__new");
		err = -errno;
		goto out;
	}

	if (nr_cold) {
		cold = load_cold(nr_cold, &cold_len);
		if (!cold) {
			err = -ENOMEM;
			goto out;
		}
	}

	funcs = calloc((size_t)nr_threads * nr_funcs, sizeof(*funcs));
	workers = calloc(nr_threads, sizeof(*workers));
	if (!funcs || !workers) {
		err = -ENOMEM;
		goto out;
	}
	/* With -s, each thread has one more page: jit:run and jit:mix. */
	slot_pages = NR_SLOTS + stack_mode;
	arena_len = (size_t)nr_threads * slot_pages * page_size;
	arena = mmap(NULL, arena_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (arena == MAP_FAILED) {
		perror("mmap");
		arena = NULL;
		err = -errno;
		goto out;
	}
	for (i = 0; i < nr_threads * nr_funcs; i++) {
		unsigned char *fixed = arena +
			(size_t)(i / nr_funcs * slot_pages + NR_SLOTS) * page_size;

		jit_compile(&funcs[i], i, fixed + MIX_OFFSET);
	}
	if (stack_mode)
		src_path_init();

	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	for (t = 0; t < nr_threads; t++) {
		workers[t].nr = t;
		workers[t].slots = arena + (size_t)t * slot_pages * page_size;
		workers[t].fixed = workers[t].slots + NR_SLOTS * page_size;
		if (stack_mode) {
			jit_compile_run(&workers[t].run);
			jit_compile_mix(&workers[t].mix);
		}
		workers[t].funcs = &funcs[(size_t)t * nr_funcs];
		err = -pthread_create(&workers[t].thread, NULL, worker_main,
				      &workers[t]);
		if (err) {
			fprintf(stderr, "pthread_create: %s\n", strerror(-err));
			nr_threads = t;
			break;
		}
	}
	/* For a test to attach once the code is in place. */
	pthread_mutex_lock(&ready_lock);
	while (nr_ready < nr_threads)
		pthread_cond_wait(&ready_cond, &ready_lock);
	pthread_mutex_unlock(&ready_lock);
	printf("jitdemo: %u cold functions live, %u threads running their code\n",
	       nr_cold, nr_threads);
	fflush(stdout);
	for (t = 0; t < nr_threads; t++) {
		pthread_join(workers[t].thread, NULL);
		if (workers[t].err && !err)
			err = workers[t].err;
		loads += workers[t].loads;
		moves += workers[t].moves;
		sink ^= workers[t].sink;
	}

	if (log && write_log(log, workers, nr_threads) && !err) {
		fprintf(stderr, "%s: write error\n", log_path);
		err = -EIO;
	}
	printf("jitdemo: pid %d, backends 0x%x, %u threads, %lu loads, %lu moves",
	       (int)getpid(), perfinject__backends(pi), nr_threads, loads,
	       moves);
	printf(", %zu live at exit, checksum %#" PRIx64 "\n",
	       perfinject__count(pi), sink);

out:
	if (workers)
		for (t = 0; t < nr_threads; t++)
			free(workers[t].log);
	free(workers);
	free(funcs);
	perfinject__free(pi);
	if (arena)
		munmap(arena, arena_len);
	if (cold)
		munmap(cold, cold_len);
	if (log && fclose(log) && !err) {
		perror(log_path);
		err = -EIO;
	}
	return err ? 1 : 0;
}

#else /* !__x86_64__ */

int main(void)
{
	fprintf(stderr, "jitdemo: the JIT emits x86-64 code only\n");
	return 77;
}

#endif
