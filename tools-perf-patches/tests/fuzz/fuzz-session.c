// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer over perf's reader of perf.data files, the way perf report
 * reads one: the input is a perf.data file, read by perf_session__new()
 * and perf_session__process_events() with the callbacks of perf report,
 * so its records are swapped and checked (other byte order), ordered,
 * and applied to the machine (MMAP, COMM, FORK, EXIT,
 * PERF_RECORD_JIT_CODE), and every sample is resolved to a thread, map
 * and symbol, its callchain too, and added to histograms sorted by
 * comm,dso,sym, which are then sorted and printed. JIT code records and
 * samples are also printed as perf script prints them. An input whose
 * header is that of a pipe (size 16) is read through a pipe, in perf's
 * pipe mode.
 *
 * What perf reads of the machine it runs on is a fixed, small world made
 * at start: the host's root (kallsyms, modules) is a directory with a
 * kallsyms of a few symbols, and --symfs an empty directory, so that an
 * input that names /usr/bin/foo or the kernel does not make perf read
 * the host's files or its 120,000 kernel symbols for every input.
 *
 * Output goes to /dev/null; run with -close_fd_mask=3 to silence the
 * warnings perf prints on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/err.h>
#include <linux/zalloc.h>
#include <perf/core.h>

#include "util/addr_location.h"
#include "util/auxtrace.h"
#include "util/callchain.h"
#include "util/compress.h"
#include "util/data.h"
#include "util/debug.h"
#include "util/dso.h"
#include "util/event.h"
#include "util/evlist.h"
#include "util/evsel.h"
#include "util/header.h"
#include "util/hist.h"
#include "util/machine.h"
#include "util/map.h"
#include "util/sample.h"
#include "util/session.h"
#include "util/sort.h"
#include "util/symbol.h"
#include "util/thread.h"
#include "util/tool.h"
#include "ui/ui.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;
/* The host as perf sees it: root/ (proc/kallsyms, proc/modules), symfs/ */
static char world[PATH_MAX];
static char root_dir[PATH_MAX];

/* The kernel perf finds, at the addresses x86-64 kernels have. */
static const char kallsyms[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T do_one_initcall\n"
	"ffffffff81100000 T __x64_sys_read\n"
	"ffffffff81100400 t read_helper\n"
	"ffffffff81200000 T asm_exc_page_fault\n"
	"ffffffff81e00000 T _etext\n"
	"ffffffff82000000 D _edata\n"
	"ffffffffc0000000 t jitmod_func\t[jitmod]\n";

static const char *const world_files[] = {
	"root/proc/kallsyms", "root/proc/modules",
};
static const char *const world_dirs[] = {
	"symfs/.debug", "symfs", "root/proc", "root",
};

static char *world_path(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", world, name);
	return buf;
}

static void remove_world(void)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(world_files); i++)
		unlink(world_path(path, world_files[i]));
	for (i = 0; i < ARRAY_SIZE(world_dirs); i++)
		rmdir(world_path(path, world_dirs[i]));
	rmdir(world);
}

static int make_world(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX];
	FILE *f;

	snprintf(world, sizeof(world), "%s/perf-fuzz-world.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(world))
		return -1;
	atexit(remove_world);
	if (mkdir(world_path(root_dir, "root"), 0700) ||
	    mkdir(world_path(path, "root/proc"), 0700) ||
	    mkdir(world_path(path, "symfs"), 0700))
		return -1;
	f = fopen(world_path(path, "root/proc/modules"), "w");
	if (!f || fclose(f))
		return -1;
	f = fopen(world_path(path, "root/proc/kallsyms"), "w");
	if (!f || fputs(kallsyms, f) < 0 || fclose(f))
		return -1;
	symbol_conf.kallsyms_name = strdup(path);
	if (!symbol_conf.kallsyms_name)
		return -1;
	/* also makes symfs/.debug the build-id cache */
	return symbol__config_symfs(NULL, world_path(path, "symfs"), 0);
}

int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	/* What perf's main() sets up */
	perf_debug_setup();
	libperf_init(NULL);

	devnull = fopen("/dev/null", "w");
	if (!devnull || make_world()) {
		perror("fuzz-session: setting up");
		exit(1);
	}
	debug_set_file(devnull);
	use_browser = 0;
	/* perf may stop reading a pipe before its writer is done */
	signal(SIGPIPE, SIG_IGN);
	/* As perf report sets them up, with callchains (-g) and --sort comm,dso,sym */
	if (hists__init() < 0)
		exit(1);
	symbol_conf.use_callchain = true;
	if (callchain_register_param(&callchain_param) < 0)
		exit(1);
	sort_order = "comm,dso,sym";
	if (setup_sorting(NULL) < 0)
		exit(1);
	if (symbol__init(NULL) < 0)
		exit(1);
	return 0;
}

/* A sample: resolved, and added to the histograms, as perf report does. */
static int fuzz__sample(const struct perf_tool *tool __maybe_unused,
			union perf_event *event __maybe_unused,
			struct perf_sample *sample, struct evsel *evsel,
			struct machine *machine)
{
	struct hist_entry_iter iter = {
		.evsel	= evsel,
		.sample	= sample,
		.ops	= &hist_iter_normal,
	};
	struct addr_location al, addr_al;
	int ret = 0;

	addr_location__init(&al);
	if (machine__resolve(machine, &al, sample) < 0) {
		ret = -1;
		goto out;
	}
	/* perf script -F ip,sym,dso,addr */
	fprintf(devnull, "%" PRIx64 " ", sample->ip);
	symbol__fprintf_symname_offs(al.sym, &al, devnull);
	map__fprintf_dsoname(al.map, devnull);
	if (evsel->core.attr.sample_type & PERF_SAMPLE_ADDR) {
		addr_location__init(&addr_al);
		thread__resolve(al.thread, &addr_al, sample);
		symbol__fprintf_symname_offs(addr_al.sym, &addr_al, devnull);
		addr_location__exit(&addr_al);
	}
	if (al.map)
		dso__set_hit(map__dso(al.map));
	if (hist_entry_iter__add(&iter, &al, PERF_MAX_STACK_DEPTH, NULL) < 0)
		ret = -1;
out:
	addr_location__exit(&al);
	return ret;
}

/* As perf script --show-jit-code-events: applied, then printed. */
static int fuzz__jit_code(const struct perf_tool *tool, union perf_event *event,
			  struct perf_sample *sample, struct machine *machine)
{
	struct evsel *evsel = sample->evsel;
	int err = perf_event__process_jit_code(tool, event, sample, machine);

	if (evsel)
		perf_event__fprintf_jit_code(event, evsel->core.attr.sample_id_all ?
					     evsel__id_hdr_size(evsel) : 0, devnull);
	perf_event__fprintf(event, machine, devnull);
	return err;
}

static int fuzz__feature(struct perf_session *session, union perf_event *event)
{
	if (event->feat.feat_id < HEADER_LAST_FEATURE)
		return perf_event__process_feature(session, event);
	return event->feat.feat_id == HEADER_LAST_FEATURE ? 0 : -1;
}

static int fuzz__attr(const struct perf_tool *tool, union perf_event *event,
		      struct evlist **pevlist)
{
	int err = perf_event__process_attr(tool, event, pevlist);

	if (err)
		return err;
	callchain_param_setup(evlist__combined_sample_type(*pevlist),
			      perf_env__arch((*pevlist)->env));
	return 0;
}

static void fuzz__tool_init(struct perf_tool *tool)
{
	perf_tool__init(tool, /*ordered_events=*/true);
	tool->sample		= fuzz__sample;
	tool->mmap		= perf_event__process_mmap;
	tool->mmap2		= perf_event__process_mmap2;
	tool->comm		= perf_event__process_comm;
	tool->namespaces	= perf_event__process_namespaces;
	tool->cgroup		= perf_event__process_cgroup;
	tool->exit		= perf_event__process_exit;
	tool->fork		= perf_event__process_fork;
	tool->lost		= perf_event__process_lost;
	tool->jit_code		= fuzz__jit_code;
	tool->attr		= fuzz__attr;
#ifdef HAVE_LIBTRACEEVENT
	tool->tracing_data	= perf_event__process_tracing_data;
#endif
	tool->build_id		= perf_event__process_build_id;
	tool->id_index		= perf_event__process_id_index;
	tool->auxtrace_info	= perf_event__process_auxtrace_info;
	tool->auxtrace		= perf_event__process_auxtrace;
	tool->event_update	= perf_event__process_event_update;
	tool->feature		= fuzz__feature;
	tool->ordering_requires_timestamps = true;
}

/* The histograms, as perf report --stdio shows them. */
static void fuzz__report(struct perf_session *session)
{
	struct evsel *pos;

	evlist__for_each_entry(session->evlist, pos) {
		struct hists *hists = evsel__hists(pos);

		hists__collapse_resort(hists, NULL);
		evsel__output_resort(pos, NULL);
		hists__fprintf(hists, true, 0, 0, 0, devnull, false);
	}
}

struct pipe_writer {
	int		fd;
	const uint8_t	*data;
	size_t		size;
};

static void *pipe_writer(void *arg)
{
	struct pipe_writer *w = arg;
	size_t done = 0;
	ssize_t n;

	while (done < w->size) {
		n = write(w->fd, w->data + done, w->size - done);
		if (n <= 0)
			break;
		done += n;
	}
	close(w->fd);
	return NULL;
}

/* Is it a pipe's header: "PERFILE2" (either order) and size 16? */
static bool is_pipe_header(const uint8_t *data, size_t size)
{
	uint64_t magic, hsize;

	if (size < 16)
		return false;
	memcpy(&magic, data, 8);
	memcpy(&hsize, data + 8, 8);
	return (magic == 0x32454c4946524550ULL || magic == 0x50455246494c4532ULL) &&
	       (hsize == 16 || hsize == 0x1000000000000000ULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_data file = {
		.mode	= PERF_DATA_MODE_READ,
		.force	= true,
	};
	struct pipe_writer writer = { .data = data, .size = size };
	struct perf_session *session;
	struct perf_tool tool;
	bool piped = is_pipe_header(data, size);
	pthread_t thread;
	char path[64];
	int fd, fds[2];

	if (piped) {
		/* perf reads a pipe on stdin ("-i -") */
		if (pipe2(fds, O_CLOEXEC))
			abort();
		if (dup2(fds[0], STDIN_FILENO) < 0)
			abort();
		close(fds[0]);
		writer.fd = fds[1];
		if (pthread_create(&thread, NULL, pipe_writer, &writer))
			abort();
		file.path = "-";
	} else {
		fd = memfd_create("perf.data", MFD_CLOEXEC);
		if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		file.path = path;
	}

	/* What the last input's samples chose; pipe mode sets it from its attrs */
	callchain_param.record_mode = CALLCHAIN_FP;
	dwarf_callchain_users = false;

	fuzz__tool_init(&tool);
	session = perf_session__new(&file, &tool);
	if (!IS_ERR(session)) {
		if (!piped)
			callchain_param_setup(evlist__combined_sample_type(session->evlist),
					      perf_env__arch(&session->header.env));
		/* The host's root is the small world made at start. */
		free(session->machines.host.root_dir);
		session->machines.host.root_dir = strdup(root_dir);
		if (!session->machines.host.root_dir)
			abort();
		zstd_init(&session->zstd_data, 0);
		if (!perf_session__process_events(session))
			fuzz__report(session);
		zstd_fini(&session->zstd_data);
		perf_session__delete(session);
	}

	/* perf closed its end of the pipe, the writer is done */
	if (piped)
		pthread_join(thread, NULL);
	else
		close(fd);
	return 0;
}
