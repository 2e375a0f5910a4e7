// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The registry reader does not trust the process it reads: descriptors
 * with sizes that would make it allocate without bound are refused
 * before it allocates (-EFBIG), bad entry sizes are -EPROTO, and a
 * registry that never holds still gives up after its time bound
 * (-EAGAIN in about 2 s), not after a number of tries.
 */
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
	static struct perfinject_registry_entry slots[4];
	static char names[4][8] = { "a", "b", "c", "d" };
	struct perfinject_registry_descriptor d = {
		.magic		 = PERFINJECT_REGISTRY_MAGIC,
		.version	 = PERFINJECT_REGISTRY_VERSION,
		.descriptor_size = sizeof(d),
		.entry_size	 = sizeof(slots[0]),
		.entries	 = (uintptr_t)slots,
		.nr_slots	 = 4,
		.nr_live	 = 4,
	};
	struct timespec t0, t1;
	double secs;
	int i;

	for (i = 0; i < 4; i++)
		slots[i] = (struct perfinject_registry_entry){
			.addr = 0x1000 * (i + 1), .len = 16,
			.name = (uintptr_t)names[i], .name_len = 1 };
	CHECK_EQ(read_fake(&d), 4);

	/* A petabyte of slots: refused before any allocation. */
	d.nr_slots = 1ULL << 44;
	CHECK_EQ(read_fake(&d), -EFBIG);
	d.nr_slots = 4;

	/* Names that add up past 256 MiB: their lengths are each fine. */
	{
		static struct perfinject_registry_entry many[70000];

		for (i = 0; i < 70000; i++)
			many[i] = (struct perfinject_registry_entry){
				.addr = i + 1, .len = 1,
				.name = (uintptr_t)names[0],
				.name_len = PERFINJECT_NAME_MAX - 1 };
		d.entries = (uintptr_t)many;
		d.nr_slots = 70000;
		CHECK_EQ(read_fake(&d), -EFBIG);
		d.entries = (uintptr_t)slots;
		d.nr_slots = 4;
	}

	/* Entry sizes the reader must not step by. */
	d.entry_size = 300;
	CHECK_EQ(read_fake(&d), -EPROTO);
	d.entry_size = sizeof(slots[0]) + 4;
	CHECK_EQ(read_fake(&d), -EPROTO);
	d.entry_size = 8;
	CHECK_EQ(read_fake(&d), -EPROTO);
	d.entry_size = sizeof(slots[0]);

	/* A writer that never finishes: the time bound, not a try count. */
	d.seq = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(read_fake(&d), -EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK(secs >= 1.9 && secs < 4, "gave up after %.2f s, want 2", secs);
	return t_done();
}
