// SPDX-License-Identifier: GPL-2.0
/*
 * gen-unwind-seeds DIR: write inputs of fuzz-unwind (unwind-input.h) to
 * start from, one file each: A called from B, with the call frame
 * information of both (A frameless, or A after "push rbp") and a line
 * table of A with an inlined frame; the same without CFI; and unwind
 * information and line tables that perf must refuse or survive.
 *
 * The .eh_frame and .eh_frame_hdr are laid out as jitdump's
 * JIT_CODE_UNWINDING_INFO has them, and as a runtime passes them with
 * PERF_JIT_CODE_DATA_UNWIND: .eh_frame at the first 8-byte boundary after
 * the code, .eh_frame_hdr right after it, every address in them relative.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind-input.h"

/* The layouts of <linux/perf_event.h> with the JIT code series */
struct jit_unwind {
	uint32_t	format;		/* PERF_JIT_CODE_UNWIND_EH_FRAME */
	uint32_t	eh_frame_hdr_size;
	uint64_t	addr;		/* where .eh_frame is, as if mapped */
};

struct jit_line {
	uint32_t	offset, line, column, depth, file, function;
};

#define UNWIND_EH_FRAME		1
#define DW_CFA_def_cfa		0x0c
#define DW_CFA_def_cfa_offset	0x0e
#define DW_CFA_advance_loc	0x40
#define DW_CFA_offset		0x80
#define DW_RBP			6
#define DW_RSP			7
#define DW_RA			16
#define HDR_SIZE		20	/* .eh_frame_hdr with a table of one FDE */
#define CIE_SIZE		24

static uint8_t buf[65536];
static size_t len;
static char *dir;

static void put(const void *p, size_t n)
{
	if (len + n > sizeof(buf)) {
		fprintf(stderr, "gen-unwind-seeds: a seed is too big\n");
		exit(1);
	}
	memcpy(buf + len, p, n);
	len += n;
}

static void put32_at(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);	/* the host's byte order, as the reader's */
}

/*
 * The unwind data of a function at code: a CIE (CFA = rsp + 8 at entry,
 * the return address at CFA - 8), one FDE over the function with the
 * instructions cfi, a terminator, and .eh_frame_hdr with a table of that
 * FDE. Returns its size.
 */
static size_t unwind_data(uint8_t *out, uint64_t code, const uint8_t *cfi, size_t cfi_len)
{
	static const uint8_t cie[CIE_SIZE] = {
		0x14, 0, 0, 0,		/* length */
		0, 0, 0, 0,		/* CIE id */
		1,			/* version */
		'z', 'R', 0,		/* augmentation */
		1,			/* code alignment factor */
		0x78,			/* data alignment factor: -8 */
		DW_RA,			/* return address column */
		1,			/* augmentation data length */
		0x1b,			/* FDE addresses: pcrel | sdata4 */
		DW_CFA_def_cfa, DW_RSP, 8,
		DW_CFA_offset | DW_RA, 1,
		0, 0,			/* DW_CFA_nop */
	};
	struct jit_unwind u = { .format = UNWIND_EH_FRAME, .eh_frame_hdr_size = HDR_SIZE };
	size_t code_to_eh = (UNWIND_CODE_LEN + 7) & ~7UL;
	size_t fde_len = (4 + 4 + 4 + 1 + cfi_len + 3) & ~3UL;
	size_t eh_len = CIE_SIZE + 4 + fde_len + 4;
	uint8_t *eh = out + sizeof(u), *fde = eh + CIE_SIZE, *hdr = eh + eh_len;

	u.addr = code + code_to_eh;
	memset(out, 0, sizeof(u) + eh_len + HDR_SIZE);
	memcpy(out, &u, sizeof(u));
	memcpy(eh, cie, sizeof(cie));
	put32_at(fde, fde_len);
	put32_at(fde + 4, CIE_SIZE + 4);	/* back to the CIE */
	put32_at(fde + 8, -(uint32_t)(code_to_eh + CIE_SIZE + 8));
	put32_at(fde + 12, UNWIND_CODE_LEN);
	fde[16] = 0;				/* augmentation data length */
	memcpy(fde + 17, cfi, cfi_len);

	hdr[0] = 1;				/* version */
	hdr[1] = 0x1b;				/* eh_frame_ptr: pcrel | sdata4 */
	hdr[2] = 0x03;				/* fde_count: udata4 */
	hdr[3] = 0x3b;				/* table: datarel | sdata4 */
	put32_at(hdr + 4, -(uint32_t)(eh_len + 4));
	put32_at(hdr + 8, 1);
	put32_at(hdr + 12, -(uint32_t)(code_to_eh + eh_len));
	put32_at(hdr + 16, -(uint32_t)(eh_len - CIE_SIZE));
	return sizeof(u) + eh_len + HDR_SIZE;
}

/* A's line table: line 10 of fuzz_jit_a, inlining "inlined" at line 20 */
static size_t lines_data(uint8_t *out)
{
	static const char strings[] = "\0Fuzz.java\0fuzz_jit_a\0inlined";
	const struct jit_line lines[] = {
		{ 0x00, 10, 0, 0, 1, 11 },
		{ 0x00, 20, 3, 1, 1, 22 },
		{ 0x40, 12, 0, 0, 1, 11 },
	};
	uint32_t head[2] = { 3, sizeof(strings) };

	memcpy(out, head, sizeof(head));
	memcpy(out + sizeof(head), lines, sizeof(lines));
	memcpy(out + sizeof(head) + sizeof(lines), strings, sizeof(strings));
	return sizeof(head) + sizeof(lines) + sizeof(strings);
}

struct seed {
	const char	*name;
	bool		pushed_rbp;	/* A's sample is after "push rbp" */
	bool		no_cfi;
	bool		no_lines;
	/* then, on the sound data: */
	size_t		poke_at;	/* of A's unwind data; 0: none */
	uint32_t	poke;
	uint32_t	lines_nr;	/* nr_lines, if not 0 */
	uint32_t	unwind_cut;	/* bytes cut off A's unwind data */
};

static const struct seed seeds[] = {
	{ .name = "sound" },
	{ .name = "pushed-rbp", .pushed_rbp = true },
	{ .name = "no-cfi", .no_cfi = true },
	{ .name = "no-lines", .no_lines = true },
	/* format 2 */
	{ .name = "bad-format", .poke = 2 },
	/* .eh_frame_hdr as big as the whole */
	{ .name = "hdr-too-big", .poke_at = 4, .poke = 4096 },
	/* an FDE whose length runs past .eh_frame */
	{ .name = "fde-too-long", .poke_at = 16 + CIE_SIZE, .poke = 0x7fff0000 },
	/* a table of a million FDEs */
	{ .name = "hdr-count" },
	{ .name = "lines-count", .lines_nr = 0x10000000 },
	{ .name = "cut", .unwind_cut = 9 },
};

static void write_seed(const struct seed *s)
{
	static const uint8_t frameless[] = { 0 };
	/* at 1, after "push rbp": CFA = rsp + 16, rbp at CFA - 16 */
	static const uint8_t pushed[] = {
		DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 16,
		DW_CFA_offset | DW_RBP, 2,
	};
	uint8_t a[256], b[256], l[256];
	struct unwind_input in = {
		.ip = UNWIND_CODE_A + 0x20,
		.sp = UNWIND_STACK,
	};
	uint64_t stack[16] = { 0 };
	size_t na, nb, nl, at = 0;
	char path[4096];
	FILE *f;

	if (s->pushed_rbp) {
		na = unwind_data(a, UNWIND_CODE_A, pushed, sizeof(pushed));
		stack[at++] = 0x1234;			/* B's rbp */
	} else {
		na = unwind_data(a, UNWIND_CODE_A, frameless, 0);
	}
	stack[at++] = UNWIND_CODE_B + 0x10;		/* A returns into B */
	stack[at++] = 0;				/* B returns nowhere */
	nb = unwind_data(b, UNWIND_CODE_B, frameless, 0);
	nl = lines_data(l);

	if (s->poke_at || s->poke)
		put32_at(a + s->poke_at, s->poke);
	if (!strcmp(s->name, "hdr-count"))
		put32_at(a + na - HDR_SIZE + 8, 1000000);
	if (s->lines_nr)
		put32_at(l, s->lines_nr);
	na -= s->unwind_cut;
	if (s->no_cfi)
		na = nb = 0;
	if (s->no_lines)
		nl = 0;

	in.unwind_size[0] = na;
	in.unwind_size[1] = nb;
	in.lines_size = nl;
	len = 0;
	put(&in, sizeof(in));
	put(a, na);
	put(b, nb);
	put(l, nl);
	put(stack, sizeof(stack));

	snprintf(path, sizeof(path), "%s/%s", dir, s->name);
	f = fopen(path, "w");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: gen-unwind-seeds DIR\n");
		return 2;
	}
	dir = argv[1];
	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		write_seed(&seeds[i]);
	return 0;
}
