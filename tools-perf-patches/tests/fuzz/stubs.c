// SPDX-License-Identifier: GPL-2.0
/*
 * What perf's util code calls in the commands (builtin-*.c) and in perf
 * test, which the fuzzers do not link: the same no-ops that perf's python
 * binding (util/python.c) gives for them. None is on the path of reading
 * a perf.data file or a JIT code registry.
 */
#include <stdbool.h>
#include <sys/types.h>
#include <linux/compiler.h>
#include <linux/types.h>
#include <perf/cpumap.h>

#include "util/env.h"
#include "util/kvm-stat.h"
#include "util/stat.h"
#include "util/trace-event.h"
#include "util/util.h"

#ifdef HAVE_KVM_STAT_SUPPORT
bool kvm_exit_event(struct evsel *evsel __maybe_unused)
{
	return false;
}

bool kvm_entry_event(struct evsel *evsel __maybe_unused)
{
	return false;
}

bool exit_event_begin(struct evsel *evsel __maybe_unused,
		      struct perf_sample *sample __maybe_unused,
		      struct event_key *key __maybe_unused)
{
	return false;
}

bool exit_event_end(struct evsel *evsel __maybe_unused,
		    struct perf_sample *sample __maybe_unused,
		    struct event_key *key __maybe_unused)
{
	return false;
}

void exit_event_decode_key(struct perf_kvm_stat *kvm __maybe_unused,
			   struct event_key *key __maybe_unused,
			   char *decode __maybe_unused)
{
}
#endif

void perf_stat__set_no_csv_summary(int set __maybe_unused)
{
}

void perf_stat__set_big_num(int set __maybe_unused)
{
}

int script_spec_register(const char *spec __maybe_unused,
			 struct scripting_ops *ops __maybe_unused)
{
	return -1;
}

void script_fetch_insn(struct perf_sample *sample __maybe_unused,
		       struct thread *thread __maybe_unused,
		       struct machine *machine __maybe_unused)
{
}

arch_syscalls__strerrno_t *arch_syscalls__strerrno_function(const char *arch __maybe_unused)
{
	return NULL;
}

void test_attr__open(struct perf_event_attr *attr __maybe_unused,
		     pid_t pid __maybe_unused, struct perf_cpu cpu __maybe_unused,
		     int fd __maybe_unused, int group_fd __maybe_unused,
		     unsigned long flags __maybe_unused)
{
}
