// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One process, one perf-map and one jitdump, whoever writes them: two
 * handles of this copy of the library and a handle of a second copy
 * (plugin_copy.so, which carries libperfinject.a), each loading from its
 * own thread at the same time; the second and third open the files while
 * the first is writing them. The perf-map must hold every line once
 * and whole; the jitdump one header, every LOAD once and whole, unique
 * code indices, and one JIT_CODE_CLOSE, at the end, from the last
 * writer to close. Each copy keeps its own registry, and a reader finds
 * and reads both: every entry once.
 *
 *   test_two_writers [-k DIR] [-n LOADS]
 *
 * -k writes into DIR and keeps the files (tests/test-perf-inject.sh
 * records this under perf and runs perf inject --jit on it).
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <unistd.h>

#include "helpers.h"

#define WRITERS	3

static int nr_loads = 500;
static const char *dir;
static unsigned char *code;
static struct perfinject *pi[2];
static int (*plugin_load)(const char *name, const void *code,
			  unsigned long len);
static int (*plugin_start)(const char *dir);
static pthread_barrier_t start;
static int progress;	/* loads of writer 0 */

/* Open a writer's handle while writer 0 is at work: late joiners. */
static int open_late(int w)
{
	while (__atomic_load_n(&progress, __ATOMIC_ACQUIRE) < nr_loads * w / 4)
		sched_yield();
	if (w == 2)
		return plugin_start(dir);
	PERFINJECT_OPTS(opts, .dir = dir, .flags = PERFINJECT_F_STRICT,
			.backends = PERFINJECT_BACKEND_PERFMAP |
				    PERFINJECT_BACKEND_JITDUMP);
	pi[w] = perfinject__new(&opts);
	return pi[w] ? 0 : -1;
}

static void name_of(char *buf, size_t sz, int w, int i)
{
	snprintf(buf, sz, "writer%d_fn_%d", w, i);
}

static void *writer(void *arg)
{
	int w = (intptr_t)arg, i, err;
	char name[64];

	pthread_barrier_wait(&start);
	if (w && open_late(w)) {
		fprintf(stderr, "writer %d: new: %s\n", w, strerror(errno));
		return (void *)1;
	}
	for (i = 0; i < nr_loads; i++) {
		const void *addr = code + ((size_t)w * nr_loads + i) * 16;

		name_of(name, sizeof(name), w, i);
		err = w < 2 ? perfinject__load(pi[w], name, (uintptr_t)addr,
					       16, 0) :
			      plugin_load(name, addr, 16);
		if (err) {
			fprintf(stderr, "writer %d load %d: %d\n", w, i, err);
			return (void *)1;
		}
		if (!w)
			__atomic_store_n(&progress, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void check_perfmap(void)
{
	int total = WRITERS * nr_loads, lines = 0, w, i;
	char path[PATH_MAX], name[64], want[128], *text, *p, *nl;
	unsigned long long a, l;
	char *seen = calloc(total, 1);
	size_t len;
	int n;

	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, getpid());
	text = t_slurp(path, &len);
	CHECK(text, "read %s", path);
	if (!text || !seen)
		return;
	for (p = text; p < text + len; p = nl + 1, lines++) {
		nl = memchr(p, '\n', text + len - p);
		CHECK(nl, "last line not whole");
		if (!nl)
			break;
		*nl = '\0';
		n = -1;
		if (sscanf(p, "%llx %llx writer%d_fn_%d%n", &a, &l, &w, &i,
			   &n) != 4 || n != nl - p || w < 0 || w >= WRITERS ||
		    i < 0 || i >= nr_loads) {
			CHECK(0, "bad line %d: %s", lines, p);
			continue;
		}
		name_of(name, sizeof(name), w, i);
		snprintf(want, sizeof(want), "%llx 10 %s",
			 (unsigned long long)(uintptr_t)(code +
			 ((size_t)w * nr_loads + i) * 16), name);
		CHECK(!strcmp(p, want), "line %s, want %s", p, want);
		CHECK(!seen[w * nr_loads + i]++, "twice: %s", p);
	}
	CHECK_EQ(lines, total);
	free(seen);
	free(text);
}

static void check_jitdump(void)
{
	int total = WRITERS * nr_loads, loads = 0, closes = 0, w, i;
	char path[PATH_MAX], *buf, *p, *end;
	uint64_t *index = calloc(total, sizeof(*index));
	char *seen = calloc(total, 1);
	size_t len;

	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, getpid());
	buf = t_slurp(path, &len);
	CHECK(buf && len >= 40, "read %s", path);
	if (!buf || len < 40 || !index || !seen)
		return;
	CHECK_EQ(t_rd32(buf), 0x4A695444);
	CHECK_EQ(t_rd32(buf + 8), 40);
	CHECK_EQ(t_rd32(buf + 20), getpid());
	for (p = buf + 40, end = buf + len; p < end; p += t_rd32(p + 4)) {
		uint32_t id = t_rd32(p), size = t_rd32(p + 4);

		CHECK(p + 16 <= end && size >= 16 && p + size <= end,
		      "torn record at %zu", (size_t)(p - buf));
		if (p + 16 > end || size < 16 || p + size > end)
			break;
		CHECK(!closes, "a record after JIT_CODE_CLOSE");
		if (id == 3) {
			closes++;
			continue;
		}
		CHECK_EQ(id, 0);
		if (id != 0 || loads >= total)
			continue;
		if (sscanf(p + 56, "writer%d_fn_%d", &w, &i) != 2 || w < 0 ||
		    w >= WRITERS || i < 0 || i >= nr_loads) {
			CHECK(0, "bad name %.40s", p + 56);
			continue;
		}
		CHECK(!seen[w * nr_loads + i]++, "twice: %s", p + 56);
		CHECK_EQ(t_rd64(p + 32), (uintptr_t)(code +
			 ((size_t)w * nr_loads + i) * 16));
		CHECK_EQ(size, 56 + strlen(p + 56) + 1 + 16);
		index[loads++] = t_rd64(p + 48);
	}
	CHECK_EQ(loads, total);
	CHECK_EQ(closes, 1);
	qsort(index, loads, sizeof(*index), cmp_u64);
	for (i = 1; i < loads; i++)
		CHECK(index[i] != index[i - 1], "code_index %llx twice",
		      (unsigned long long)index[i]);
	free(index);
	free(seen);
	free(buf);
}

struct seen {
	unsigned char	*count;		/* per writer and load */
	int		other;		/* entries of nobody here */
};

static int count_entry(const struct perfinject_code *c, void *ctx)
{
	struct seen *s = ctx;
	int w, i;

	if (sscanf(c->name, "writer%d_fn_%d", &w, &i) == 2 && w >= 0 &&
	    w < WRITERS && i >= 0 && i < nr_loads &&
	    c->addr == (uintptr_t)&code[(w * nr_loads + i) * 16])
		s->count[w * nr_loads + i]++;
	else
		s->other++;
	return 0;
}

/*
 * Two copies, two registries: a reader finds both descriptors, and
 * reading the process gives every entry of both, once. The plugin
 * exports its descriptor (where perf looks), and it is its own.
 */
static void check_registries(void *plugin, const void *plugin_desc)
{
	const void *mine = perfinject_registry__descriptor();
	struct seen s = { .count = calloc(WRITERS, nr_loads) };
	uint64_t addrs[4];
	int nr, i, bad = 0;

	CHECK(dlsym(plugin, "perfinject_registry_descriptor") == plugin_desc,
	      "the plugin does not export its own descriptor");
	nr = perfinject_registry__find_all_pid(getpid(), addrs, 4);
	CHECK(nr == 2, "find_all_pid found %d registries, want 2", nr);
	for (i = 0; i < nr && nr == 2; i++)
		CHECK(addrs[i] == (uintptr_t)mine ||
		      addrs[i] == (uintptr_t)plugin_desc,
		      "registry %d at %#llx is neither copy's", i,
		      (unsigned long long)addrs[i]);
	if (nr == 2)
		CHECK(addrs[0] != addrs[1], "one registry found twice");

	nr = perfinject_registry__read_pid(getpid(), 0, count_entry, &s);
	CHECK(nr == WRITERS * nr_loads, "read_pid: %d entries, want %d", nr,
	      WRITERS * nr_loads);
	for (i = 0; i < WRITERS * nr_loads; i++)
		bad += s.count[i] != 1;
	CHECK(!bad && !s.other,
	      "%d entries not read exactly once, %d unknown", bad, s.other);
	free(s.count);
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX], so[PATH_MAX + 32], *slash;
	const void *(*plugin_descriptor)(void);
	void (*plugin_stop)(void);
	pthread_t tid[WRITERS];
	void *plugin, *ret;
	int opt, w;
	ssize_t n;

	while ((opt = getopt(argc, argv, "k:n:")) != -1) {
		switch (opt) {
		case 'k':
			dir = optarg;
			break;
		case 'n':
			nr_loads = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-k DIR] [-n LOADS]\n",
				argv[0]);
			return T_FAIL;
		}
	}
	if (!dir)
		dir = t_tmpdir();
	code = calloc(WRITERS * nr_loads, 16);
	if (!code)
		return T_FAIL;
	for (w = 0; w < WRITERS * nr_loads * 16; w++)
		code[w] = w * 31;

	/* The second copy: build/tests/plugin_copy.so, by this binary's dir. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return T_FAIL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	*slash = '\0';
	snprintf(so, sizeof(so), "%s/../plugin_copy.so", exe);
	plugin = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	CHECK(plugin, "dlopen %s: %s", so, dlerror());
	if (!plugin)
		return t_done();
	plugin_start = (int (*)(const char *))dlsym(plugin, "plugin_start");
	plugin_load = (int (*)(const char *, const void *, unsigned long))
		dlsym(plugin, "plugin_load");
	plugin_stop = (void (*)(void))dlsym(plugin, "plugin_stop");
	plugin_descriptor = (const void *(*)(void))dlsym(plugin,
							 "plugin_descriptor");
	CHECK(plugin_start && plugin_load && plugin_stop && plugin_descriptor,
	      "plugin symbols");
	if (t_failures)
		return t_done();
	/* Two copies indeed: each has its own registry. */
	CHECK(plugin_descriptor() != perfinject_registry__descriptor(),
	      "the plugin shares this copy");

	/* Writer 0's handle first; the others join while it writes. */
	{
		PERFINJECT_OPTS(opts, .dir = dir, .flags = PERFINJECT_F_STRICT,
				.backends = PERFINJECT_BACKEND_PERFMAP |
					    PERFINJECT_BACKEND_JITDUMP);

		pi[0] = perfinject__new(&opts);
		CHECK(pi[0], "new: %s", strerror(errno));
		if (!pi[0])
			return t_done();
	}

	pthread_barrier_init(&start, NULL, WRITERS);
	for (w = 0; w < WRITERS; w++)
		pthread_create(&tid[w], NULL, writer, (void *)(intptr_t)w);
	for (w = 0; w < WRITERS; w++) {
		pthread_join(tid[w], &ret);
		CHECK(!ret, "writer %d failed", w);
	}
	check_registries(plugin, plugin_descriptor());

	/* The second copy's handle closes last: its close record ends it. */
	perfinject__free(pi[0]);
	perfinject__free(pi[1]);
	plugin_stop();
	dlclose(plugin);

	check_perfmap();
	check_jitdump();
	free(code);
	return t_done();
}
