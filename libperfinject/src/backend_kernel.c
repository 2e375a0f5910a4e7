// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The kernel backend: PR_PERF_JIT_CODE. */
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "internal.h"

#define PI_KERNEL_OPS_NEEDED	((1 << PERF_JIT_CODE_LOAD) |		\
				 (1 << PERF_JIT_CODE_UNLOAD) |		\
				 (1 << PERF_JIT_CODE_MOVE))

/* The operations the kernel takes, once probed; 0: not yet, or none. */
static int pi_kernel_ops;

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
		__atomic_store_n(&pi_kernel_ops, state > 0 ? ops : 0,
				 __ATOMIC_RELAXED);
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

static void pi_kernel_data_entry(struct perf_jit_code_entry *k,
				 const struct perf_jit_code_entry *load,
				 const struct perfinject_registry_data *h)
{
	memset(k, 0, sizeof(*k));
	k->op = PERF_JIT_CODE_DATA;
	k->addr = load->addr;
	k->len = load->len;
	k->code_index = load->code_index;
	k->data = (__u64)(uintptr_t)(h + 1);
	k->data_type = h->type;
	k->data_size = h->size;
}

/*
 * Send a LOAD with options, followed by its line table and unwind
 * information where the kernel takes them: those the registry keeps,
 * or else built for this call. 0 once the LOAD went; a payload the
 * kernel refuses is dropped with a warning, as the load itself stands.
 * Else the LOAD's error.
 */
static int pi_kernel_send_load(struct perfinject *pi,
			       const struct pi_change *c)
{
	const struct perfinject_registry_data *h;
	struct perf_jit_code_entry k[3];
	void *data = NULL;
	uint32_t size = 0;
	unsigned int nr = 1, sent, i;
	size_t off = 0;
	int err;

	k[0] = c->kentry;
	if (pi->keep_data) {
		data = c->add->data;
		size = c->add->data_size;
	} else {
		err = pi_data_build(c->lo, c->kentry.addr, c->kentry.len,
				    c->name, &data, &size);
		if (err)
			pi_warn("kernel: the line table and unwind information of %s not sent: %s\n",
				c->name, strerror(-err));
	}
	while (nr < 3 && (h = pi_data_next(data, size, &off)))
		pi_kernel_data_entry(&k[nr++], &c->kentry, h);

	i = 0;
	err = 0;
	while (i < nr) {
		err = pi_kernel_send(pi, &k[i], nr - i, &sent);
		i += sent;
		if (!err)
			break;
		if (!i)
			break;
		/* The load went: a refused payload is skipped. */
		pi_warn("kernel: refused the %s of %s: %s\n",
			k[i].data_type == PERF_JIT_CODE_DATA_LINES ?
			"line table" : "unwind information",
			c->name, strerror(-err));
		err = 0;
		i++;
	}
	if (!pi->keep_data)
		pi_data_put(data);
	return err;
}

/*
 * Send the kernel entries of @nr changes: as pi_kernel_send(), with each
 * LOAD's line table and unwind information after it when the kernel
 * takes DATA entries: the options' (a LOAD's c->lo), or what the
 * registry keeps of it (c->add, with PERFINJECT_F_REGISTRY_DATA; so a
 * rundown sends them again). *@sent counts changes.
 */
int pi_kernel_send_changes(struct perfinject *pi, const struct pi_change *chg,
			   unsigned int nr, unsigned int *sent)
{
	bool data = __atomic_load_n(&pi_kernel_ops, __ATOMIC_RELAXED) &
		    (1 << PERF_JIT_CODE_DATA);
	unsigned int done = 0, start, i, n;
	int err = 0;

	while (done < nr) {
		/* Plain entries up to the next LOAD with data. */
		for (start = done, n = 0; done < nr; done++) {
			const struct pi_change *c = &chg[done];

			if (data && c->kentry.op == PERF_JIT_CODE_LOAD &&
			    (pi->keep_data ? c->add->data_size :
			     c->lo->nr_lines || c->lo->eh_frame))
				break;
			pi->kentries[n++] = c->kentry;
		}
		if (n) {
			err = pi_kernel_send(pi, pi->kentries, n, &i);
			if (err) {
				*sent = start + i;
				return err;
			}
		}
		if (done < nr) {
			err = pi_kernel_send_load(pi, &chg[done]);
			if (err)
				break;
			done++;
		}
	}
	*sent = done;
	return err;
}
