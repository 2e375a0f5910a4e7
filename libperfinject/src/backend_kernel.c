// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The kernel backend: PR_PERF_JIT_CODE. */
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

int pi_kernel_send(struct perfinject *pi,
		   const struct perf_jit_code_entry *entries, unsigned int nr)
{
	struct perf_jit_code_args args = {
		.size		= sizeof(args),
		.entries	= (__u64)(uintptr_t)entries,
		.nr_entries	= nr,
		.entry_size	= sizeof(*entries),
	};

	(void)pi;
	if (prctl(PR_PERF_JIT_CODE, (unsigned long)&args, 0UL, 0UL, 0UL) < 0)
		return -errno;
	return 0;
}
