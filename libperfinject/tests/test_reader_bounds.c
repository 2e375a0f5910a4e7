// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The registry reader does not trust the process it reads: descriptors
 * with sizes that would make it allocate without bound are refused
 * before it allocates (-EFBIG), bad entry sizes are -EPROTO, and a
 * chunk table that never holds still gives up after its time bound
 * (-EAGAIN in about 2 s), not after a number of tries; an entry being
 * changed is left out.
 */
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

static int count_cb(const struct perfinject_code *code, void *ctx)
{
	(void)code;
	(*(int *)ctx)++;
	return 0;
}

static int read_fake(const struct perfinject_registry_descriptor *d)
{
	int n = 0;

	return perfinject_registry__read_pid(getpid(), (uintptr_t)d, count_cb,
					     &n);
}

int main(void)
{
	static struct perfinject_registry_entry chunk[2][4];
	static char names[4][8] = { "a", "b", "c", "d" };
	static uint64_t table[2];
	struct perfinject_registry_descriptor d = {
		.magic		 = PERFINJECT_REGISTRY_MAGIC,
		.version	 = PERFINJECT_REGISTRY_VERSION,
		.descriptor_size = sizeof(d),
		.entry_size	 = sizeof(chunk[0][0]),
		.chunks		 = (uintptr_t)table,
		.nr_chunks	 = 2,
		.chunk_slots	 = 4,
		.nr_live	 = 5,
	};
	struct timespec t0, t1;
	double secs;
	int i;

	table[0] = (uintptr_t)chunk[0];
	table[1] = (uintptr_t)chunk[1];
	for (i = 0; i < 8; i++)
		chunk[i / 4][i % 4] = (struct perfinject_registry_entry){
			.addr = 0x1000 * (i + 1), .len = 16,
			.name = i < 5 ? (uintptr_t)names[i % 4] : 0,
			.name_len = 1 };
	/* An entry being changed (odd count) is left out. */
	chunk[1][0].seq = 3;
	CHECK_EQ(read_fake(&d), 4);
	chunk[1][0].seq = 4;
	CHECK_EQ(read_fake(&d), 5);
	/* A chunk not yet in the table (0) ends it. */
	table[1] = 0;
	CHECK_EQ(read_fake(&d), 4);
	table[1] = (uintptr_t)chunk[1];

	/* A petabyte of entries: refused before any allocation. */
	d.nr_chunks = 1ULL << 40;
	CHECK_EQ(read_fake(&d), -EFBIG);
	d.nr_chunks = 2;

	/* Names that add up past 256 MiB: their lengths are each fine. */
	{
		static struct perfinject_registry_entry many[70000];
		static uint64_t mtable[70];

		for (i = 0; i < 70000; i++)
			many[i] = (struct perfinject_registry_entry){
				.addr = i + 1, .len = 1,
				.name = (uintptr_t)names[0],
				.name_len = PERFINJECT_NAME_MAX - 1 };
		for (i = 0; i < 70; i++)
			mtable[i] = (uintptr_t)&many[i * 1000];
		d.chunks = (uintptr_t)mtable;
		d.nr_chunks = 68;
		d.chunk_slots = 1024;
		CHECK_EQ(read_fake(&d), -EFBIG);
		d.chunks = (uintptr_t)table;
		d.nr_chunks = 2;
		d.chunk_slots = 4;
	}

	/* Entry sizes the reader must not step by, odd chunk sizes. */
	d.entry_size = 300;
	CHECK_EQ(read_fake(&d), -EPROTO);
	d.entry_size = sizeof(chunk[0][0]) + 4;
	CHECK_EQ(read_fake(&d), -EPROTO);
	d.entry_size = 8;
	CHECK_EQ(read_fake(&d), -EPROTO);
	d.entry_size = sizeof(chunk[0][0]);
	d.chunk_slots = 3;
	CHECK_EQ(read_fake(&d), -EPROTO);
	d.chunk_slots = 4;
	d.version = 1;
	CHECK_EQ(read_fake(&d), -EPROTO);
	d.version = PERFINJECT_REGISTRY_VERSION;

	/* A chunk table that never settles: the time bound, not a count. */
	d.seq = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(read_fake(&d), -EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK(secs >= 1.9 && secs < 4, "gave up after %.2f s, want 2", secs);
	return t_done();
}
