// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The external-reader protocol: a child changes its registry without
 * end, a batch every 20 us, while the parent reads it with
 * process_vm_readv(). Every entry read must be one the child published,
 * whole; no logical slot may appear twice (an entry read as stable was
 * live all the time between the two passes, and the child never has two
 * for one slot); entries that changed during the read may be left out,
 * but most must be there; and no read may fail. (The parent reads the
 * child, not the other way round: Yama's ptrace_scope=1 allows only
 * that.)
 */
#include <inttypes.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define NR_SLOTS	200
#define PER_BATCH	8

static uint64_t slot_addr(unsigned int s, int side)
{
	return 0x40000000ULL + ((uint64_t)s << 12) + ((uint64_t)side << 11);
}

static uint64_t index_len(uint64_t idx)
{
	return 1 + idx % 251;
}

/* Keeps NR_SLOTS entries live at every published state. */
static void child(int ready_fd)
{
	struct perfinject_code_op ops[2 * PER_BATCH];
	uint64_t idx[NR_SLOTS];
	int side[NR_SLOTS] = { 0 };
	unsigned int seed = 42, s, i, n;
	char names[PER_BATCH][64];
	struct perfinject *pi;
	uint64_t gen = 0;
	char byte = 1;

	PERFINJECT_OPTS(opts, .flags = PERFINJECT_F_NO_ENV);
	pi = perfinject__new(&opts);
	if (!pi)
		_exit(T_FAIL);
	for (s = 0; s < NR_SLOTS; s++) {
		char name[64];

		idx[s] = (++gen << 16) | s;
		snprintf(name, sizeof(name), "s%u_i%" PRIx64, s, idx[s]);
		if (perfinject__load(pi, name, slot_addr(s, 0),
				     index_len(idx[s]), idx[s]))
			_exit(T_FAIL);
	}
	if (write(ready_fd, &byte, 1) != 1)
		_exit(T_FAIL);
	for (;;) {
		n = 0;
		for (i = 0; i < PER_BATCH; i++) {
			/* Distinct slots in one batch keep it simple. */
			s = (rand_r(&seed) % (NR_SLOTS / PER_BATCH)) *
			    PER_BATCH + i;
			if (rand_r(&seed) & 1) {
				ops[n++] = (struct perfinject_code_op){
					.op = PERFINJECT_OP_MOVE,
					.addr = slot_addr(s, side[s]),
					.new_addr = slot_addr(s, !side[s]),
				};
			} else {
				ops[n++] = (struct perfinject_code_op){
					.op = PERFINJECT_OP_UNLOAD_INDEX,
					.code_index = idx[s],
				};
				idx[s] = (++gen << 16) | s;
				snprintf(names[i], sizeof(names[i]),
					 "s%u_i%" PRIx64, s, idx[s]);
				ops[n++] = (struct perfinject_code_op){
					.op = PERFINJECT_OP_LOAD,
					.addr = slot_addr(s, !side[s]),
					.len = index_len(idx[s]),
					.code_index = idx[s],
					.name = names[i],
				};
			}
			side[s] = !side[s];
		}
		if (perfinject__batch(pi, ops, n) != (int)n)
			_exit(T_FAIL);
		usleep(20);
	}
}

struct snap {
	int	seen[NR_SLOTS];
	int	bad;
};

static int snap_cb(const struct perfinject_code *c, void *ctx)
{
	struct snap *sn = ctx;
	unsigned int s;
	uint64_t idx;

	if (sscanf(c->name, "s%u_i%" SCNx64, &s, &idx) != 2 ||
	    s >= NR_SLOTS || (idx & 0xffff) != s || c->code_index != idx ||
	    c->len != index_len(idx) ||
	    (c->addr != slot_addr(s, 0) && c->addr != slot_addr(s, 1))) {
		if (!sn->bad++)
			fprintf(stderr, "torn entry %#" PRIx64 " %s\n",
				c->addr, c->name);
		return 0;
	}
	sn->seen[s]++;
	return 0;
}

int main(void)
{
	uint64_t addr = 0;
	int status, ret, reads = 0, again = 0, whole = 0, s;
	long total = 0;
	struct timespec t0, t;
	pid_t pid;

	pid = t_start_child(child);
	if (pid < 0)
		return T_FAIL;

	ret = perfinject_registry__find_pid(pid, &addr);
	CHECK(!ret, "find_pid: %d", ret);
	CHECK_EQ(addr, (uintptr_t)perfinject_registry__descriptor());

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct snap sn = { 0 };

		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= 3)
			break;
		ret = perfinject_registry__read_pid(pid, addr, snap_cb, &sn);
		if (ret == -EAGAIN) {
			again++;
			continue;
		}
		if (ret < 0) {
			CHECK(0, "read_pid: %s", strerror(-ret));
			break;
		}
		reads++;
		total += ret;
		if (ret == NR_SLOTS)
			whole++;
		CHECK(ret <= NR_SLOTS, "%d of %d entries", ret, NR_SLOTS);
		CHECK(!sn.bad, "%d torn entries", sn.bad);
		for (s = 0; s < NR_SLOTS; s++)
			CHECK(sn.seen[s] <= 1, "slot %d seen %d times", s,
			      sn.seen[s]);
		if (t_failures)
			break;
	}

	/* The child must still be busy: the reads raced with writes. */
	CHECK(waitpid(pid, &status, WNOHANG) == 0, "child died: %#x", status);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fprintf(stderr, "%d snapshots, %d gave up (EAGAIN), %d with all %d "
		"entries, %.1f on average\n", reads, again, whole, NR_SLOTS,
		reads ? (double)total / reads : 0.0);
	CHECK(reads > 10, "only %d snapshots", reads);
	/* Left out are only what changed while it was read: few. */
	CHECK(whole > 0, "no snapshot had all entries");
	CHECK(reads && total / reads >= NR_SLOTS / 4,
	      "%ld entries per snapshot on average", reads ? total / reads : 0);
	/* Only a growing chunk table makes a reader wait: none grew here. */
	CHECK_EQ(again, 0);
	return t_done();
}
