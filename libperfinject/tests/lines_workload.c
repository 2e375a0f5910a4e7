// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A JIT with a line table and unwind information, for
 * tests/test-perf-inject.sh: it writes two x86-64 functions, describes
 * each with perfinject__load_opts() (a line per instruction of its loop,
 * in "workload.js", the loop's line inlined from "inline.js"; .eh_frame
 * and .eh_frame_hdr laid out for the ELF file perf inject --jit makes)
 * and runs them for about a second.
 *
 *   lines_workload [-s SECONDS]
 *
 * Prints "pid PID" and, per function, "fn NAME ADDR LINE..." for the
 * test to compare.
 */
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

/*
 * The function, and the line of each instruction:
 *   0  mov ecx, 1000000	b9 40 42 0f 00	line + 0
 *   5  add eax, 1		83 c0 01	line + 1
 *   8  xor eax, 0x55		83 f0 55	line + 2 (inlined)
 *  11  dec ecx			ff c9		line + 3
 *  13  jnz 5			75 f6		line + 3
 *  15  ret			c3		line + 4
 */
static const unsigned char body[] = {
	0xb9, 0x40, 0x42, 0x0f, 0x00, 0x83, 0xc0, 0x01, 0x83, 0xf0, 0x55,
	0xff, 0xc9, 0x75, 0xf6, 0xc3,
};
static const unsigned int row_off[] = { 0, 5, 8, 11, 15 };
static const unsigned int row_line[] = { 0, 1, 2, 3, 4 };

/* Where perf inject puts things in the ELF file it writes (genelf.h). */
#define ELF_TEXT	0x80

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/*
 * .eh_frame (a CIE: CFA = rsp + 8, return address at CFA - 8; an FDE for
 * the whole function, nothing pushed) and .eh_frame_hdr with its search
 * table, for a function of @len bytes at ELF_TEXT: .eh_frame follows the
 * code at an 8-byte boundary, .eh_frame_hdr follows .eh_frame.
 */
static void make_cfi(size_t len, unsigned char *eh, size_t *eh_sz,
		     unsigned char *hdr, size_t *hdr_sz)
{
	static const unsigned char cie[] = {
		0x14, 0, 0, 0,		/* length */
		0, 0, 0, 0,		/* CIE id */
		1, 'z', 'R', 0,		/* version, augmentation */
		1, 0x78, 16,		/* code 1, data -8, return address r16 */
		1, 0x1b,		/* augmentation: FDE pcrel|sdata4 */
		0x0c, 7, 8,		/* DW_CFA_def_cfa rsp, 8 */
		0x90, 1,		/* DW_CFA_offset r16, cfa - 8 */
		0, 0,			/* padding */
	};
	uint64_t eh_addr = (ELF_TEXT + len + 7) & ~7ULL, hdr_addr;
	size_t fde = sizeof(cie);

	memcpy(eh, cie, sizeof(cie));
	put32(eh + fde, 0x14);			/* length */
	put32(eh + fde + 4, fde + 4);		/* back to the CIE */
	put32(eh + fde + 8, ELF_TEXT - (eh_addr + fde + 8));	/* pc */
	put32(eh + fde + 12, len);		/* range */
	memset(eh + fde + 16, 0, 8);		/* aug length 0, nops */
	*eh_sz = fde + 24;

	hdr_addr = eh_addr + *eh_sz;
	hdr[0] = 1;			/* version */
	hdr[1] = 0x1b;			/* eh_frame_ptr: pcrel|sdata4 */
	hdr[2] = 0x03;			/* fde_count: udata4 */
	hdr[3] = 0x3b;			/* table: datarel|sdata4 */
	put32(hdr + 4, eh_addr - (hdr_addr + 4));
	put32(hdr + 8, 1);
	put32(hdr + 12, ELF_TEXT - hdr_addr);
	put32(hdr + 16, eh_addr + fde - hdr_addr);
	*hdr_sz = 20;
}

int main(int argc, char **argv)
{
	const char *names[2] = { "jit:lines_a", "jit:lines_b" };
	const unsigned int base_line[2] = { 10, 20 };
	struct perfinject_frame frames[2][6];
	struct perfinject_line rows[2][5];
	unsigned char eh[64], hdr[32];
	int (*fn[2])(void);
	struct perfinject *pi;
	double seconds = 1.0;
	struct timespec t0, t;
	size_t eh_sz, hdr_sz;
	unsigned char *mem;
	int opt, f, r;

	while ((opt = getopt(argc, argv, "s:")) != -1) {
		if (opt != 's')
			return T_FAIL;
		seconds = atof(optarg);
	}
#if !defined(__x86_64__)
	SKIP("the workload is x86-64 code");
#endif
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return T_FAIL;
	memcpy(mem, body, sizeof(body));
	memcpy(mem + 64, body, sizeof(body));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC))
		return T_FAIL;

	pi = perfinject__new(NULL);
	if (!pi) {
		perror("perfinject__new");
		return T_FAIL;
	}
	make_cfi(sizeof(body), eh, &eh_sz, hdr, &hdr_sz);
	printf("pid %d\n", getpid());
	for (f = 0; f < 2; f++) {
		uint64_t addr = (uintptr_t)mem + 64 * f;

		/*
		 * One row per instruction; the xor (row 2) comes from "mix",
		 * inlined from inline.js: its frames are that, then the
		 * caller's line. frames[f][] holds them in row order.
		 */
		static const unsigned int first[] = { 0, 1, 2, 4, 5 };

		for (r = 0; r < 6; r++)
			frames[f][r] = (struct perfinject_frame){
				.file = "workload.js",
				.line = base_line[f] + row_line[r < 3 ? r :
								r - 1],
			};
		frames[f][2] = (struct perfinject_frame){
			.file = "inline.js", .line = 5, .function = "mix",
		};
		printf("fn %s %#llx", names[f], (unsigned long long)addr);
		for (r = 0; r < 5; r++) {
			rows[f][r] = (struct perfinject_line){
				.addr = addr + row_off[r],
				.frames = &frames[f][first[r]],
				.nr_frames = r == 2 ? 2 : 1,
			};
			printf(" %s:%u", frames[f][first[r]].file,
			       frames[f][first[r]].line);
		}
		printf("\n");
		{
			PERFINJECT_LOAD_OPTS(o, .kind = PERFINJECT_KIND_FUNCTION,
					     .lines = rows[f], .nr_lines = 5,
					     .eh_frame = eh,
					     .eh_frame_sz = eh_sz,
					     .eh_frame_hdr = hdr,
					     .eh_frame_hdr_sz = hdr_sz);

			if (perfinject__load_opts(pi, names[f], addr,
						  sizeof(body), 0, &o)) {
				perror("perfinject__load_opts");
				return T_FAIL;
			}
		}
		fn[f] = (int (*)(void))(uintptr_t)addr;
	}
	fflush(stdout);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (f = 0; f < 2; f++)
			fn[f]();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 <
		 seconds);
	perfinject__free(pi);
	return 0;
}
