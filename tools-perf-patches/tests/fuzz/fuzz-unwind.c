// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer over what perf report does with the unwind information and
 * line tables that any process can send with its JIT code: the in-memory
 * ELF file that util/unwind-libdw.c makes of PERF_JIT_CODE_DATA_UNWIND
 * for libdw's CFI interpreter, and the line table that srcline and the
 * inlined frames of a callchain read.
 *
 * The input (unwind-input.h) is the data of two JIT functions and the
 * user stack and registers of one sample. The fuzzer writes them as a
 * perf.data in pipe mode, the way the kernel writes them: an attr with
 * --call-graph dwarf's sample type (REGS_USER and STACK_USER), the
 * process's COMM, a PERF_RECORD_JIT_CODE LOAD of each function, their
 * PERF_RECORD_JIT_CODE_DATA in pieces of 16 KiB, and the sample. perf
 * reads it as perf report -g --sort srcline reads it: the records
 * applied, the sample resolved, its callchain unwound by libdw (with
 * inlined frames and the source line of each entry), and the sample's
 * own source line.
 *
 * FUZZ_VERBOSE=1 prints, for each sample, its source line and its
 * callchain, innermost first ("?" for what has no symbol or line):
 *
 *   srcline: FILE:LINE
 *   chain: SYM SYM ...			("chain: none" if it has none)
 *   frame: SYM FILE:LINE		one for each entry of the chain
 *
 * run.sh checks with it that the seeds reach libdw: a sound input
 * unwinds from A to B by their CFI.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/err.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>
#include <perf/core.h>

#include "util/addr_location.h"
#include "util/callchain.h"
#include "util/data.h"
#include "util/debug.h"
#include "util/dso.h"
#include "util/event.h"
#include "util/evlist.h"
#include "util/evsel.h"
#include "util/machine.h"
#include "util/map.h"
#include "util/sample.h"
#include "util/session.h"
#include "util/srcline.h"
#include "util/symbol.h"
#include "util/thread.h"
#include "util/tool.h"
#include "ui/ui.h"

#include "unwind-input.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PIPE_MAGIC	0x32454c4946524550ULL	/* "PERFILE2" */
#define PID		4243
#define T0		7000000000000ULL
/* the x86-64 user registers the sample holds: bp, sp, ip */
#define REGS_MASK	((1ULL << 6) | (1ULL << 7) | (1ULL << 8))
/* A perf.data of the input: its payloads, stack and records */
#define IMAGE_MAX	(4 * 65536 + UNWIND_STACK_MAX + 8192)

static FILE *out;
static bool fuzz_verbose;
static char world[PATH_MAX];

static struct {
	uint8_t		b[IMAGE_MAX];
	size_t		len;
	uint64_t	t;
} img;

static void put(const void *p, size_t n)
{
	if (img.len + n > sizeof(img.b))
		abort();	/* IMAGE_MAX is too small for what it must hold */
	memcpy(img.b + img.len, p, n);
	img.len += n;
}

static void put64(uint64_t v)
{
	put(&v, 8);
}

static void put32(uint32_t v)
{
	put(&v, 4);
}

static void pad8(void)
{
	static const uint8_t zero[8];

	put(zero, (8 - img.len % 8) % 8);
}

static size_t begin(uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc };
	size_t at = img.len;

	put(&h, sizeof(h));
	return at;
}

/* sample_id (pid, tid, time), then the record's size */
static void end(size_t at, bool sample_id)
{
	struct perf_event_header *h = (void *)(img.b + at);

	if (sample_id) {
		put32(PID);
		put32(PID);
		put64(img.t++);
	}
	h->size = img.len - at;
}

static void put_load(uint64_t addr, uint64_t index, const char *name)
{
	size_t at = begin(PERF_RECORD_JIT_CODE, PERF_RECORD_MISC_USER);

	put32(PID);
	put32(PID);
	put32(PERF_JIT_CODE_LOAD);
	put32(0);			/* flags */
	put64(addr);
	put64(UNWIND_CODE_LEN);
	put64(0);			/* new_addr */
	put64(index);
	put(name, strlen(name) + 1);
	pad8();
	end(at, true);
}

/* The data of the load at addr, in pieces as the kernel writes them. */
static void put_data(uint64_t addr, uint64_t index, uint32_t type,
		     const uint8_t *p, uint32_t size)
{
	uint32_t off, n;
	size_t at;

	for (off = 0; off < size; off += n) {
		n = size - off < UNWIND_PIECE ? size - off : UNWIND_PIECE;
		at = begin(PERF_RECORD_JIT_CODE_DATA, PERF_RECORD_MISC_USER);
		put32(PID);
		put32(PID);
		put32(type);
		put32(0);		/* flags */
		put64(addr);
		put64(index);
		put32(off);
		put32(n);
		put32(size);
		put32(0);
		put(p + off, n);
		pad8();
		end(at, true);
	}
}

static void put_attr(void)
{
	struct perf_event_attr attr = {
		.type			= PERF_TYPE_SOFTWARE,
		.config			= PERF_COUNT_SW_CPU_CLOCK,
		.size			= sizeof(attr),
		.sample_period		= 250000,
		.sample_type		= PERF_SAMPLE_IP | PERF_SAMPLE_TID |
					  PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
					  PERF_SAMPLE_REGS_USER |
					  PERF_SAMPLE_STACK_USER,
		.exclude_kernel		= 1,
		.sample_id_all		= 1,
		.sample_regs_user	= REGS_MASK,
		.sample_stack_user	= UNWIND_STACK_MAX,
	};
	size_t at = begin(PERF_RECORD_HEADER_ATTR, 0);

	put(&attr, sizeof(attr));
	put64(1);			/* its one id */
	end(at, false);
}

/* The perf.data file of an input; false if the input has no header. */
static bool make_image(const uint8_t *data, size_t size)
{
	struct unwind_input in;
	const uint8_t *p, *end_of_input = data + size;
	uint32_t n[3];
	uint64_t stack;
	size_t at, i;

	if (size < sizeof(in))
		return false;
	memcpy(&in, data, sizeof(in));
	p = data + sizeof(in);
	n[0] = in.unwind_size[0];
	n[1] = in.unwind_size[1];
	n[2] = in.lines_size;

	img.len = 0;
	img.t = T0;
	put64(PIPE_MAGIC);
	put64(16);
	put_attr();

	at = begin(PERF_RECORD_COMM, PERF_RECORD_MISC_USER);
	put32(PID);
	put32(PID);
	put("fuzzjit\0", 8);
	end(at, true);

	put_load(UNWIND_CODE_A, 1, UNWIND_NAME_A);
	put_load(UNWIND_CODE_B, 2, UNWIND_NAME_B);
	for (i = 0; i < 3; i++) {
		if (n[i] > (size_t)(end_of_input - p))
			n[i] = end_of_input - p;
		if (n[i] > 65536)
			n[i] = 65536;
		if (n[i])
			put_data(i == 1 ? UNWIND_CODE_B : UNWIND_CODE_A, i == 1 ? 2 : 1,
				 i == 2 ? PERF_JIT_CODE_DATA_LINES : PERF_JIT_CODE_DATA_UNWIND,
				 p, n[i]);
		p += n[i];
	}

	/* The sample: ip, pid/tid, time, period, user regs, user stack */
	stack = end_of_input - p;
	if (stack > UNWIND_STACK_MAX)
		stack = UNWIND_STACK_MAX;
	at = begin(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put64(in.ip);
	put32(PID);
	put32(PID);
	put64(img.t++);
	put64(250000);
	put64(PERF_SAMPLE_REGS_ABI_64);
	put64(in.bp);
	put64(in.sp);
	put64(in.ip);
	put64((stack + 7) & ~7ULL);
	put(p, stack);
	pad8();
	put64(stack);			/* dyn_size */
	end(at, false);
	return true;
}

/* The sample, as perf report -g --sort srcline and perf script -F srcline */
static int fuzz__sample(const struct perf_tool *tool __maybe_unused,
			union perf_event *event __maybe_unused,
			struct perf_sample *sample, struct evsel *evsel,
			struct machine *machine)
{
	struct callchain_cursor *cursor = get_tls_callchain_cursor();
	struct callchain_cursor_node *node;
	struct addr_location al;
	char *srcline;

	addr_location__init(&al);
	if (machine__resolve(machine, &al, sample) < 0 || !cursor)
		goto out;
	if (al.map && al.sym) {
		srcline = map__srcline(al.map, al.addr, al.sym);
		if (fuzz_verbose)
			fprintf(out, "srcline: %s\n", srcline ?: "?");
		if (srcline != SRCLINE_UNKNOWN)
			free(srcline);
	}
	if (thread__resolve_callchain(al.thread, cursor, evsel, sample, NULL, NULL,
				      PERF_MAX_STACK_DEPTH)) {
		fprintf(out, "chain: none\n");
		goto out;
	}
	callchain_cursor_commit(cursor);
	fprintf(out, "chain:");
	while ((node = callchain_cursor_current(cursor))) {
		fprintf(out, " %s", node->ms.sym ? node->ms.sym->name : "?");
		callchain_cursor_advance(cursor);
	}
	fprintf(out, "\n");
	/* each entry's source line, as perf report -g --sort srcline has it */
	callchain_cursor_commit(cursor);
	while ((node = callchain_cursor_current(cursor))) {
		fprintf(out, "frame: %s %s\n", node->ms.sym ? node->ms.sym->name : "?",
			node->srcline ?: "?");
		callchain_cursor_advance(cursor);
	}
out:
	fflush(out);
	addr_location__exit(&al);
	return 0;
}

static void fuzz__tool_init(struct perf_tool *tool)
{
	perf_tool__init(tool, /*ordered_events=*/true);
	tool->sample		= fuzz__sample;
	tool->comm		= perf_event__process_comm;
	tool->jit_code		= perf_event__process_jit_code;
	tool->attr		= perf_event__process_attr;
	tool->ordering_requires_timestamps = true;
}

static void remove_world(void)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/symfs/.debug", world);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/symfs", world);
	rmdir(path);
	rmdir(world);
}

int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX];

	perf_debug_setup();
	libperf_init(NULL);
	fuzz_verbose = getenv("FUZZ_VERBOSE") && *getenv("FUZZ_VERBOSE") == '1';
	out = fuzz_verbose ? stdout : fopen("/dev/null", "w");
	if (!out)
		exit(1);
	if (!fuzz_verbose)
		debug_set_file(out);
	use_browser = 0;

	/* perf report -g --sort srcline: callchains with source lines and inlines */
	symbol_conf.use_callchain = true;
	symbol_conf.inline_name = true;
	callchain_param.key = CCKEY_SRCLINE;
	if (callchain_register_param(&callchain_param) < 0 || symbol__init(NULL) < 0)
		exit(1);

	/* An empty --symfs: nothing of this machine's files is read. */
	snprintf(world, sizeof(world), "%s/perf-fuzz-unwind.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(world))
		exit(1);
	atexit(remove_world);
	snprintf(path, sizeof(path), "%s/symfs", world);
	if (mkdir(path, 0700) || symbol__config_symfs(NULL, path, 0))
		exit(1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_data file = {
		.path	= "-",
		.mode	= PERF_DATA_MODE_READ,
		.force	= true,
	};
	struct perf_session *session;
	struct perf_tool tool;
	int fds[2], saved;

	if (!make_image(data, size))
		return 0;

	/* perf reads a pipe on stdin ("-i -"): the whole image fits in it */
	if (pipe2(fds, O_CLOEXEC) || fcntl(fds[1], F_SETPIPE_SZ, IMAGE_MAX) < IMAGE_MAX ||
	    write(fds[1], img.b, img.len) != (ssize_t)img.len)
		abort();
	close(fds[1]);
	saved = dup(STDIN_FILENO);
	if (saved < 0 || dup2(fds[0], STDIN_FILENO) < 0)
		abort();
	close(fds[0]);

	callchain_param.record_mode = CALLCHAIN_DWARF;
	dwarf_callchain_users = true;
	fuzz__tool_init(&tool);
	session = perf_session__new(&file, &tool);
	if (!IS_ERR(session)) {
		perf_session__process_events(session);
		perf_session__delete(session);
	}

	if (dup2(saved, STDIN_FILENO) < 0)
		abort();
	close(saved);
	return 0;
}
