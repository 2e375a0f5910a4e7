// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * maplines [-n LINES] [-s SLOTS] [-j]: what a JIT pays per perf-map line
 * (or jitdump record, -j), written as V8 writes them: a line-buffered
 * FILE and vfprintf (V8's --perf-basic-prof), or fwrite of the record's
 * head, name, NUL and code (V8's --perf-prof). The code lands in SLOTS
 * places in turn, so that each line past the first SLOTS replaces live
 * code, as a JIT's garbage collector makes it do. Prints the nanoseconds
 * per line; run it with and without the bridge preloaded
 * (bridge/bench/run.sh does both).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct jit_load {
	uint32_t id, total_size;
	uint64_t timestamp;
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void header(FILE *fp)
{
	struct {
		uint32_t magic, version, total_size, elf_mach, pad1, pid;
		uint64_t timestamp, flags;
	} h = { 0x4A695444, 1, sizeof(h), 62, 0, getpid(), now_ns(), 0 };

	fwrite(&h, sizeof(h), 1, fp);
}

int main(int argc, char **argv)
{
	static const unsigned char code[64] = { 0x55, 0x48, 0x89, 0xe5 };
	unsigned long lines = 200000, slots = 1000, i;
	char path[64], name[96];
	bool jitdump = false;
	uint64_t t0, t1;
	FILE *fp;
	int c;

	while ((c = getopt(argc, argv, "n:s:j")) != -1) {
		switch (c) {
		case 'n':
			lines = strtoul(optarg, NULL, 0);
			break;
		case 's':
			slots = strtoul(optarg, NULL, 0);
			break;
		case 'j':
			jitdump = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-n LINES] [-s SLOTS] [-j]\n",
				argv[0]);
			return 2;
		}
	}
	if (!lines || !slots) {
		fprintf(stderr, "maplines: LINES and SLOTS must be positive\n");
		return 2;
	}
	if (jitdump)
		snprintf(path, sizeof(path), "/tmp/jit-%d.dump", getpid());
	else
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	fp = fopen(path, jitdump ? "w+" : "w");
	if (!fp) {
		perror(path);
		return 1;
	}
	if (jitdump)
		header(fp);
	else
		setvbuf(fp, NULL, _IOLBF, 0);
	t0 = now_ns();
	for (i = 0; i < lines; i++) {
		uint64_t addr = 0x7f0000000000ULL + (i % slots) * 0x200;

		snprintf(name, sizeof(name), "JS:*fn_%lu /srv/app/lib/module.js:%lu:17",
			 i, i % 997);
		if (jitdump) {
			size_t nl = strlen(name) + 1;
			struct jit_load r = {
				.id = 0, .total_size = sizeof(r) + nl + sizeof(code),
				.timestamp = now_ns(), .pid = getpid(),
				.tid = getpid(), .vma = addr, .code_addr = addr,
				.code_size = 0x180, .code_index = i,
			};

			fwrite(&r, sizeof(r), 1, fp);
			fwrite(name, nl, 1, fp);
			fwrite(code, sizeof(code), 1, fp);
		} else {
			fprintf(fp, "%" PRIx64 " %x %s\n", addr, 0x180, name);
		}
	}
	fflush(fp);
	t1 = now_ns();
	fclose(fp);
	unlink(path);
	printf("%.0f\n", (double)(t1 - t0) / lines);
	return 0;
}
