// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The kernel backend: PR_PERF_JIT_CODE. */
#include <string.h>
#include <sys/prctl.h>

#include "internal.h"

#define PI_KERNEL_OPS_NEEDED	((1 << PERF_JIT_CODE_LOAD) |		\
				 (1 << PERF_JIT_CODE_UNLOAD) |		\
				 (1 << PERF_JIT_CODE_MOVE))

/*
 * Probe once per process: 0 if the kernel takes loads, unloads and
 * moves, else -EOPNOTSUPP. A kernel without the prctl fails the probe
 * with EINVAL.
 */
int pi_kernel_probe(void)
{
	static int probed; /* 0: not yet, 1: yes, -1: no */
	int state = __atomic_load_n(&probed, __ATOMIC_RELAXED);
	int ops;

	if (!state) {
		ops = prctl(PR_PERF_JIT_CODE, 0UL, 0UL, 0UL, 0UL);
		state = ops >= 0 &&
			(ops & PI_KERNEL_OPS_NEEDED) == PI_KERNEL_OPS_NEEDED ?
			1 : -1;
		__atomic_store_n(&probed, state, __ATOMIC_RELAXED);
	}
	return state > 0 ? 0 : -EOPNOTSUPP;
}

/* Send one entry whose name is too long for the kernel, cut to its limit. */
static int pi_kernel_send_cut(const struct perf_jit_code_entry *entry)
{
	const char *src = (const char *)(uintptr_t)entry->name;
	char name[PERF_JIT_CODE_NAME_MAX];
	struct perf_jit_code_entry cut = *entry;
	struct perf_jit_code_args args = {
		.size		= sizeof(args),
		.entries	= (__u64)(uintptr_t)&cut,
		.nr_entries	= 1,
		.entry_size	= sizeof(cut),
	};
	size_t len = sizeof(name) - 1;

	/* Cut before a UTF-8 sequence rather than through it. */
	while (len && ((unsigned char)src[len] & 0xc0) == 0x80)
		len--;
	memcpy(name, src, len);
	name[len] = '\0';
	cut.name = (__u64)(uintptr_t)name;
	if (prctl(PR_PERF_JIT_CODE, (unsigned long)&args, 0UL, 0UL, 0UL) < 0)
		return -errno;
	return 0;
}

/*
 * The prctl consumes entries like write(2): it may take fewer than it was
 * given (it caps the bytes of one call), and an entry it refuses ends the
 * call before it. Go on from where it stopped; a name longer than the
 * kernel takes is cut rather than lost. *@sent: the entries delivered,
 * all of them when this returns 0, else those before the one refused.
 */
int pi_kernel_send(struct perfinject *pi,
		   const struct perf_jit_code_entry *entries, unsigned int nr,
		   unsigned int *sent)
{
	struct perf_jit_code_args args = {
		.size		= sizeof(args),
		.entry_size	= sizeof(*entries),
	};
	unsigned int done = 0;
	int n, err = 0;

	(void)pi;
	while (done < nr) {
		args.entries = (__u64)(uintptr_t)&entries[done];
		args.nr_entries = nr - done;
		n = prctl(PR_PERF_JIT_CODE, (unsigned long)&args, 0UL, 0UL, 0UL);
		if (n > 0) {
			done += n;
			continue;
		}
		if (n == 0) {
			err = -EIO;
			break;
		}
		if (errno != ENAMETOOLONG) {
			err = -errno;
			break;
		}
		err = pi_kernel_send_cut(&entries[done]);
		if (err)
			break;
		done++;
	}
	*sent = done;
	return done == nr ? 0 : err;
}
