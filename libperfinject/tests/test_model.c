// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The registry against a model of what it must do. Random loads,
 * unloads, moves and unloads by index over a small address space (so
 * that addresses and indices are reused all the time and collide in the
 * hash tables), as single calls and as batches of up to 3000 operations
 * (more than one kernel chunk), with invalid operations mixed in. Every
 * return value must be the model's, and after every step every address
 * and index must be found exactly as the model has it.
 *
 *   test_model [SEED [STEPS]]
 */
#include <stdint.h>

#include "helpers.h"

#define NR_ADDR		512
#define NR_INDEX	64
#define BASE		0x7f0000000000ULL

struct live {
	bool		on;
	uint64_t	len;
	uint64_t	index;
	unsigned int	name;
};

static struct live model[NR_ADDR];
static uint64_t rng;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from the seed. */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static int model_find_index(uint64_t index)
{
	int i;

	for (i = 0; i < NR_ADDR; i++)
		if (model[i].on && model[i].index == index)
			return i;
	return -1;
}

static char names[NR_ADDR * 4][24];

/* Apply @op to the model; the result perfinject__batch() must give it. */
static int model_apply(const struct perfinject_code_op *op)
{
	int a = (op->addr - BASE) / 16, b, i;

	switch (op->op) {
	case PERFINJECT_OP_LOAD:
		if (model[a].on)
			return -EEXIST;
		if (op->code_index && model_find_index(op->code_index) >= 0)
			return -EEXIST;
		model[a] = (struct live){ true, op->len, op->code_index,
					  (unsigned int)((op->name - names[0]) /
							 sizeof(names[0])) };
		return 0;
	case PERFINJECT_OP_UNLOAD:
		if (!model[a].on)
			return -ENOENT;
		model[a].on = false;
		return 0;
	case PERFINJECT_OP_UNLOAD_INDEX:
		i = model_find_index(op->code_index);
		if (i < 0)
			return -ENOENT;
		model[i].on = false;
		return 0;
	case PERFINJECT_OP_MOVE:
		b = (op->new_addr - BASE) / 16;
		if (a == b)
			return -EINVAL;
		if (!model[a].on)
			return -ENOENT;
		if (model[b].on)
			return -EEXIST;
		model[b] = model[a];
		model[a].on = false;
		return 0;
	}
	return -EINVAL;
}

static void random_op(struct perfinject_code_op *op)
{
	uint64_t a = BASE + 16 * (rnd() % NR_ADDR);

	memset(op, 0, sizeof(*op));
	switch (rnd() % 8) {
	case 0: case 1: case 2:
		op->op = PERFINJECT_OP_LOAD;
		op->addr = a;
		op->len = 1 + rnd() % 16;
		op->code_index = rnd() % 3 ? 0 : 1 + rnd() % NR_INDEX;
		op->name = names[rnd() % (NR_ADDR * 4)];
		break;
	case 3: case 4:
		op->op = PERFINJECT_OP_UNLOAD;
		op->addr = a;
		break;
	case 5:
		op->op = PERFINJECT_OP_UNLOAD_INDEX;
		op->code_index = 1 + rnd() % NR_INDEX;
		break;
	case 6:
		op->op = PERFINJECT_OP_MOVE;
		op->addr = a;
		do
			op->new_addr = BASE + 16 * (rnd() % NR_ADDR);
		while (op->new_addr == a);
		break;
	default:
		/* Invalid: a move to itself. */
		op->op = PERFINJECT_OP_MOVE;
		op->addr = a;
		op->new_addr = a;
		break;
	}
}

static void compare(struct perfinject *pi, unsigned long step)
{
	struct perfinject_code code;
	size_t live = 0;
	char buf[32];
	int i, err;

	for (i = 0; i < NR_ADDR; i++) {
		err = perfinject__find(pi, BASE + 16 * i, &code, buf,
				       sizeof(buf));
		if (!model[i].on) {
			CHECK(err == -ENOENT, "step %lu: %#llx found", step,
			      BASE + 16ULL * i);
			continue;
		}
		live++;
		CHECK(!err && code.len == model[i].len &&
		      code.code_index == model[i].index &&
		      !strcmp(buf, names[model[i].name]),
		      "step %lu: %#llx: err %d len %llu index %llu name %s",
		      step, BASE + 16ULL * i, err,
		      (unsigned long long)code.len,
		      (unsigned long long)code.code_index, buf);
	}
	CHECK(perfinject__count(pi) == live, "step %lu: count %zu, model %zu",
	      step, perfinject__count(pi), live);
}

int main(int argc, char **argv)
{
	static struct perfinject_code_op ops[3000];
	unsigned long seed = argc > 1 ? strtoul(argv[1], NULL, 0) : 1;
	unsigned long steps = argc > 2 ? strtoul(argv[2], NULL, 0) : 400;
	unsigned long step;
	struct perfinject *pi;
	size_t n, i, expect;
	int want, rc;

	PERFINJECT_OPTS(opts, .flags = PERFINJECT_F_NO_ENV,
			.backends = PERFINJECT_BACKEND_PERFMAP,
			.dir = t_tmpdir());
	for (i = 0; i < NR_ADDR * 4; i++)
		snprintf(names[i], sizeof(names[i]), "fn_%zu", i);
	rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	pi = perfinject__new(&opts);
	CHECK(pi, "new: %s", strerror(errno));
	if (!pi)
		return t_done();

	for (step = 0; step < steps && !t_failures; step++) {
		if (rnd() % 4 == 0) {
			random_op(&ops[0]);
			want = model_apply(&ops[0]);
			rc = perfinject__batch(pi, ops, 1);
			CHECK(rc == (want ? want : 1),
			      "step %lu: op %u: %d, model %d", step, ops[0].op,
			      rc, want);
		} else {
			n = 1 + rnd() % (rnd() % 2 ? 3000 : 64);
			for (i = 0; i < n; i++)
				random_op(&ops[i]);
			/*
			 * Like write(2): applied up to the first failure.
			 * Call again from there until all are done.
			 */
			for (i = 0; i < n && !t_failures; ) {
				size_t j;

				expect = 0;
				for (j = i; j < n; j++) {
					want = model_apply(&ops[j]);
					if (want)
						break;
					expect++;
				}
				rc = perfinject__batch(pi, ops + i, n - i);
				if (expect)
					CHECK(rc == (int)expect,
					      "step %lu: batch at %zu: %d, model %zu",
					      step, i, rc, expect);
				else
					CHECK(rc == want,
					      "step %lu: batch at %zu: %d, model %d",
					      step, i, rc, want);
				i += expect ? expect : 1;
			}
		}
		compare(pi, step);
	}
	perfinject__free(pi);
	if (t_failures)
		fprintf(stderr, "seed %lu\n", seed);
	return t_done();
}
