// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * perfinject: the command of libperfinject-bridge.
 *
 *   perfinject run [OPTIONS] [--] CMD [ARG]...   run a JIT runtime with
 *       the bridge preloaded and its perf map (or jitdump) turned on
 *   perfinject list PID       the live JIT code of a process, as perf-map
 *       lines, from libperfinject's registry
 *   perfinject status         what this machine offers
 *
 * See perfinject(1).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <perfinject/perfinject.h>

#ifndef PI_BRIDGE_DEFAULT
#define PI_BRIDGE_DEFAULT "/usr/local/lib/libperfinject-bridge.so"
#endif
#define PI_BRIDGE_NAME	"libperfinject-bridge.so"

/* A version query gets this long (an emulated machine is slow). */
#define PI_PROBE_SECONDS	60

static const char *prog = "perfinject";
static bool quiet;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *to)
{
	fprintf(to,
		"usage: perfinject run [-n|--no-files] [-j|--jitdump] [-r|--runtime=NAME]\n"
		"                      [--bridge=PATH] [-q|--quiet] [--] CMD [ARG]...\n"
		"       perfinject list PID\n"
		"       perfinject status\n"
		"       perfinject --help | --version\n"
		"\n"
		"run     runs CMD with libperfinject-bridge preloaded and the runtime's perf\n"
		"        map turned on (node, mono, erl and the commands of Erlang/OTP), so\n"
		"        that perf gets every piece of JIT code from the kernel, by name, as\n"
		"        the runtime makes it\n"
		"          -n, --no-files   keep the runtime's perf files in memory: nothing in\n"
		"                           /tmp or the working directory (needs the kernel's\n"
		"                           JIT code records)\n"
		"          -j, --jitdump    the runtime's jitdump instead of its perf map\n"
		"                           (node: --perf-prof; erl: +JPperf dump)\n"
		"          -r, --runtime=node|mono|erlang|none\n"
		"                           what CMD is, when its name does not say; none\n"
		"                           preloads the bridge and turns nothing on\n"
		"          --bridge=PATH    the bridge library (default: beside this command,\n"
		"                           else " PI_BRIDGE_DEFAULT ")\n"
		"          -q, --quiet      say nothing unless something is wrong\n"
		"list    prints the code live in process PID as perf-map lines\n"
		"        (START SIZE name, hex), from libperfinject's registry\n"
		"status  says whether this kernel has the JIT code records\n");
}

/* The kernel's JIT code records: a handle with only that backend. */
static int quiet_print(enum perfinject_print_level level, const char *fmt,
		       va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static bool kernel_has_records(void)
{
	PERFINJECT_OPTS(opts, .backends = PERFINJECT_BACKEND_KERNEL,
			.flags = PERFINJECT_F_NO_ENV | PERFINJECT_F_NO_REGISTRY);
	perfinject_print_fn_t old = perfinject_set_print(quiet_print);
	struct perfinject *pi = perfinject__new(&opts);
	bool yes = pi && (perfinject__backends(pi) & PERFINJECT_BACKEND_KERNEL);

	perfinject__free(pi);
	perfinject_set_print(old);
	return yes;
}

/* ---- what CMD is ---- */

enum runtime {
	RT_UNKNOWN,
	RT_NONE,
	RT_NODE,
	RT_MONO,
	RT_ERLANG,
	RT_JAVA,
};

static const char *const rt_names[] = {
	[RT_UNKNOWN] = "unknown", [RT_NONE] = "none", [RT_NODE] = "node",
	[RT_MONO] = "mono", [RT_ERLANG] = "erlang", [RT_JAVA] = "java",
};

static enum runtime runtime_of_name(const char *path)
{
	static const struct {
		const char *name;
		enum runtime rt;
	} names[] = {
		{ "node", RT_NODE }, { "nodejs", RT_NODE },
		{ "mono", RT_MONO }, { "mono-sgen", RT_MONO },
		{ "erl", RT_ERLANG }, { "erlexec", RT_ERLANG },
		{ "escript", RT_ERLANG }, { "elixir", RT_ERLANG },
		{ "iex", RT_ERLANG }, { "mix", RT_ERLANG },
		{ "rebar3", RT_ERLANG },
		{ "java", RT_JAVA },
	};
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(base, names[i].name))
			return names[i].rt;
	return RT_UNKNOWN;
}

/* @name as execvp() finds it: a path into @out, or false. */
static bool find_in_path(const char *name, char *out, size_t out_sz)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(name, '/')) {
		snprintf(out, out_sz, "%s", name);
		return !access(out, F_OK);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; p = end + 1) {
		struct stat st;

		end = strchrnul(p, ':');
		snprintf(out, out_sz, "%.*s%s%s", (int)(end - p), p,
			 end == p ? "" : "/", name);
		if (!stat(out, &st) && S_ISREG(st.st_mode) &&
		    !access(out, X_OK))
			return true;
		if (!*end)
			return false;
	}
}

/*
 * What the loader would do with @path: 0 if the bridge can be preloaded
 * into it; else say why not and return 2. A script is judged by its
 * interpreter; its interpreter's name goes to @interp (or "").
 */
static int check_executable(const char *path, char *interp, size_t interp_sz,
			    int depth)
{
	unsigned char buf[512];
	struct stat st;
	ssize_t n;
	int fd;

	interp[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		say("%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 126;
	}
	if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getegid())) {
		close(fd);
		say("%s is set-user-ID or set-group-ID: the loader ignores LD_PRELOAD for it, so the bridge cannot see its JIT code",
		    path);
		return 2;
	}
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n < 0) {
		say("%s: %s", path, strerror(errno));
		return 126;
	}
	buf[n] = '\0';
	if (n >= 2 && buf[0] == '#' && buf[1] == '!') {
		char *s = (char *)buf + 2, *e, word[PATH_MAX];

		s += strspn(s, " \t");
		e = s + strcspn(s, " \t\n");
		snprintf(word, sizeof(word), "%.*s", (int)(e - s), s);
		/* "#!/usr/bin/env node": the program env runs. */
		if (!strcmp(strrchr(word, '/') ? strrchr(word, '/') + 1 : word,
			    "env")) {
			char name[NAME_MAX + 1];

			s = e + strspn(e, " \t");
			if (!strncmp(s, "-S", 2))
				s += 2 + strspn(s + 2, " \t");
			e = s + strcspn(s, " \t\n");
			snprintf(name, sizeof(name), "%.*s", (int)(e - s), s);
			if (!*name || !find_in_path(name, word, sizeof(word)))
				return 0;
		}
		if (depth > 3 || !*word)
			return 0;
		if (check_executable(word, interp, interp_sz, depth + 1))
			return 2;
		snprintf(interp, interp_sz, "%s", word);
		return 0;
	}
	if (n >= (ssize_t)sizeof(Elf64_Ehdr) && !memcmp(buf, ELFMAG, SELFMAG)) {
		bool dynamic = false;

		if (buf[EI_CLASS] == ELFCLASS64) {
			Elf64_Ehdr eh;
			Elf64_Phdr ph;
			int i;

			memcpy(&eh, buf, sizeof(eh));
			fd = open(path, O_RDONLY | O_CLOEXEC);
			for (i = 0; fd >= 0 && i < eh.e_phnum && i < 256; i++) {
				if (pread(fd, &ph, sizeof(ph), eh.e_phoff +
					  (off_t)i * eh.e_phentsize) !=
				    sizeof(ph))
					break;
				if (ph.p_type == PT_INTERP)
					dynamic = true;
			}
			if (fd >= 0)
				close(fd);
		} else {
			/* 32-bit: the loader's own checks decide. */
			dynamic = true;
		}
		if (!dynamic) {
			say("%s is linked statically: no loader runs in it to preload the bridge",
			    path);
			return 2;
		}
	}
	return 0;
}

/* ---- asking the runtime ---- */

/*
 * A runtime asked its version with its perf option on may open its perf
 * map all the same (Mono does): an empty one of the asking is removed.
 */
static void forget_probe(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	if (!lstat(path, &st) && S_ISREG(st.st_mode) && !st.st_size &&
	    st.st_uid == geteuid())
		unlink(path);
}

/*
 * Run @argv with @env_name=@env_value (unset if NULL) and the bridge's
 * variables out of the way; its first line of output goes to @out. The
 * exit status, or -1 if it could not run or took too long.
 */
static int ask(char *const argv[], const char *env_name, const char *env_value,
	       char *out, size_t out_sz)
{
	int pipefd[2], status, ms = PI_PROBE_SECONDS * 1000;
	size_t have = 0;
	pid_t pid;

	out[0] = '\0';
	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		setpgid(0, 0);
		unsetenv("PERFINJECT_BRIDGE_NO_FILES");
		if (env_value)
			setenv(env_name, env_value, 1);
		else
			unsetenv(env_name);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pipefd[1]);
	while (ms > 0) {
		struct pollfd p = { .fd = pipefd[0], .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 200) == 0) {
			ms -= 200;
			continue;
		}
		if (have + 1 >= out_sz) {
			char sink[256];

			n = read(pipefd[0], sink, sizeof(sink));
		} else {
			n = read(pipefd[0], out + have, out_sz - have - 1);
			if (n > 0)
				have += n;
		}
		if (n <= 0)
			break;
	}
	close(pipefd[0]);
	out[have] = '\0';
	if (ms <= 0) {
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
		return -1;
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	forget_probe(pid);
	if (!WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* The first line of @s, without its newline. */
static char *first_line(char *s)
{
	s[strcspn(s, "\n")] = '\0';
	return s;
}

/* Whether the space-separated list @list has the word @word. */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word), len;
	const char *p;

	for (p = list; p && *p; p += len) {
		p += strspn(p, " \t");
		len = strcspn(p, " \t");
		if (len == n && !strncmp(p, word, n))
			return true;
	}
	return false;
}

/* Whether the user turned the runtime's perf output on already. */
static bool option_given(const char *env)
{
	static const char *const given[] = {
		"--perf-basic-prof", "--perf-basic-prof-only-functions",
		"--perf-prof", "--jitmap", "+JPperf",
	};
	size_t i;

	for (i = 0; i < sizeof(given) / sizeof(given[0]); i++)
		if (has_word(env, given[i]))
			return true;
	return false;
}

struct plan {
	enum runtime rt;
	bool jitdump;
	const char *env_name;	/* the runtime's variable */
	const char *option;	/* what goes in it */
	char version[128];
};

static int plan_node(const char *path, struct plan *pl)
{
	char *argv[] = { (char *)path, "--version", NULL };
	char out[256];
	int major = 0, rc;

	pl->env_name = "NODE_OPTIONS";
	pl->option = pl->jitdump ? "--perf-prof" : "--perf-basic-prof";
	/* Node refuses an option it does not take here: ask with it. */
	rc = ask(argv, pl->env_name, pl->option, out, sizeof(out));
	if (rc || sscanf(out, "v%d.", &major) != 1) {
		say("%s --version with NODE_OPTIONS=%s %s: %s", path,
		    pl->option, rc < 0 ? "did not answer" : "failed",
		    *out ? first_line(out) : "no output");
		say("Node.js 12 or later takes %s in NODE_OPTIONS", pl->option);
		return 2;
	}
	snprintf(pl->version, sizeof(pl->version), "Node.js %.100s",
		 first_line(out));
	return 0;
}

static int plan_mono(const char *path, struct plan *pl)
{
	char *argv[] = { (char *)path, "--version", NULL };
	char out[512];
	int rc;

	if (pl->jitdump) {
		say("mono: this launcher knows no jitdump option of Mono; leave out --jitdump (the perf map, --jitmap, is used)");
		return 2;
	}
	pl->env_name = "MONO_ENV_OPTIONS";
	pl->option = "--jitmap";
	rc = ask(argv, pl->env_name, pl->option, out, sizeof(out));
	if (rc || strncmp(out, "Mono JIT compiler version ", 26)) {
		say("%s --version with MONO_ENV_OPTIONS=--jitmap %s: %s", path,
		    rc < 0 ? "did not answer" : "failed",
		    *out ? first_line(out) : "no output");
		return 2;
	}
	first_line(out);
	snprintf(pl->version, sizeof(pl->version), "Mono %.*s",
		 (int)strcspn(out + 26, " "), out + 26);
	return 0;
}

/* Erlang: OTP 25 or later, the JIT emulator; asked of erl beside @path. */
static int plan_erlang(const char *path, struct plan *pl)
{
	char erl[PATH_MAX], real[PATH_MAX], out[512], flavor[32] = "";
	char *argv[] = { erl, "-noshell", "-eval",
		"io:format(\"~s ~s~n\", [erlang:system_info(otp_release), "
		"erlang:system_info(emu_flavor)]), halt().", NULL };
	int otp = 0, rc;
	char *slash;

	pl->env_name = "ERL_AFLAGS";
	pl->option = pl->jitdump ? "+JPperf dump" : "+JPperf map";
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	snprintf(erl, sizeof(erl), "%s", real);
	slash = strrchr(erl, '/');
	if (slash)
		snprintf(slash + 1, sizeof(erl) - (slash + 1 - erl), "erl");
	if (access(erl, X_OK) && !find_in_path("erl", erl, sizeof(erl))) {
		say("no erl beside %s or in PATH to ask the OTP release", path);
		return 2;
	}
	rc = ask(argv, pl->env_name, NULL, out, sizeof(out));
	if (rc || sscanf(out, "%d %31s", &otp, flavor) != 2) {
		say("%s could not say its OTP release and emulator (%s): %s",
		    erl, rc < 0 ? "no answer" : "failed",
		    *out ? first_line(out) : "no output");
		say("Erlang/OTP 25 or later with the JIT writes a perf map");
		return 2;
	}
	if (otp < 25) {
		say("Erlang/OTP %d has no '%s' (OTP 25 or later)", otp,
		    pl->option);
		return 2;
	}
	if (strcmp(flavor, "jit")) {
		say("this Erlang/OTP %d runs the %s emulator, not the JIT: it makes no machine code to name",
		    otp, flavor);
		return 2;
	}
	snprintf(pl->version, sizeof(pl->version), "Erlang/OTP %d", otp);
	return 0;
}

/* @name=@value, or @value appended to what @name holds. */
static int env_add(const char *name, const char *value, const char *sep)
{
	const char *old = getenv(name);
	char *both;
	int rc;

	if (!old || !*old)
		return setenv(name, value, 1);
	if (asprintf(&both, "%s%s%s", old, sep, value) < 0)
		return -1;
	rc = setenv(name, both, 1);
	free(both);
	return rc;
}

static bool find_bridge(const char *given, char *out, size_t out_sz)
{
	char self[PATH_MAX - sizeof(PI_BRIDGE_NAME) - 1];
	ssize_t n;
	char *slash;

	if (given) {
		if (!realpath(given, out))
			return false;
		return true;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(out, out_sz, "%s/%s", self, PI_BRIDGE_NAME);
			if (!access(out, R_OK))
				return true;
		}
	}
	snprintf(out, out_sz, "%s", PI_BRIDGE_DEFAULT);
	return !access(out, R_OK);
}

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-files", no_argument, NULL, 'n' },
		{ "jitdump", no_argument, NULL, 'j' },
		{ "runtime", required_argument, NULL, 'r' },
		{ "bridge", required_argument, NULL, 'b' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char path[PATH_MAX], bridge[PATH_MAX], interp[PATH_MAX];
	const char *bridge_arg = NULL;
	struct plan pl = { .rt = RT_UNKNOWN };
	bool no_files = false, records;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+njr:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			no_files = true;
			break;
		case 'j':
			pl.jitdump = true;
			break;
		case 'r':
			for (pl.rt = RT_NONE; pl.rt <= RT_ERLANG; pl.rt++)
				if (!strcmp(optarg, rt_names[pl.rt]))
					break;
			if (pl.rt > RT_ERLANG) {
				say("unknown runtime '%s' (node, mono, erlang or none)",
				    optarg);
				return 2;
			}
			break;
		case 'b':
			bridge_arg = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		say("run: no command given");
		usage(stderr);
		return 2;
	}
	argv += optind;

	if (!find_bridge(bridge_arg, bridge, sizeof(bridge))) {
		say("cannot find %s (%s); give it with --bridge=PATH",
		    bridge_arg ? bridge_arg : PI_BRIDGE_NAME,
		    bridge_arg ? strerror(errno) : "neither beside this command nor at " PI_BRIDGE_DEFAULT);
		return 2;
	}
	if (!find_in_path(argv[0], path, sizeof(path))) {
		say("%s: command not found", argv[0]);
		return 127;
	}
	rc = check_executable(path, interp, sizeof(interp), 0);
	if (rc)
		return rc;
	if (pl.rt == RT_UNKNOWN) {
		pl.rt = runtime_of_name(argv[0]);
		if (pl.rt == RT_UNKNOWN) {
			char real[PATH_MAX];

			if (realpath(path, real))
				pl.rt = runtime_of_name(real);
		}
		if (pl.rt == RT_UNKNOWN && *interp)
			pl.rt = runtime_of_name(interp);
	}
	switch (pl.rt) {
	case RT_JAVA:
		say("Java: the JVM writes no perf map of its own as it compiles; use the JVMTI agent: java -agentpath:/usr/lib/libperfinject-jvmti.so ... (libperfinject/agents/jvmti)");
		return 2;
	case RT_NODE:
		rc = plan_node(*interp && runtime_of_name(path) != RT_NODE ?
			       interp : path, &pl);
		break;
	case RT_MONO:
		rc = plan_mono(path, &pl);
		break;
	case RT_ERLANG:
		rc = plan_erlang(path, &pl);
		break;
	default:
		rc = 0;
		break;
	}
	if (rc)
		return rc;

	records = kernel_has_records();
	if (!records && no_files) {
		say("this kernel has no JIT code records (PR_PERF_JIT_CODE): without the runtime's files perf would have nothing to name its code by; --no-files refused");
		return 2;
	}

	if (env_add("LD_PRELOAD", bridge, ":") ||
	    (no_files && setenv("PERFINJECT_BRIDGE_NO_FILES", "1", 1))) {
		say("setting the environment: %s", strerror(errno));
		return 2;
	}
	if (pl.env_name && !option_given(getenv(pl.env_name)) &&
	    env_add(pl.env_name, pl.option, " ")) {
		say("setting %s: %s", pl.env_name, strerror(errno));
		return 2;
	}

	if (!quiet) {
		if (pl.env_name)
			say("%s with %s=\"%s\", the bridge preloaded%s",
			    pl.version, pl.env_name, getenv(pl.env_name),
			    no_files ? "; its perf files kept in memory" : "");
		else if (pl.rt == RT_NONE)
			say("the bridge preloaded; turn on %s's perf map or jitdump yourself",
			    argv[0]);
		else
			say("%s is no runtime this command knows (node, mono, erl): the bridge is preloaded; turn on its perf map or jitdump yourself (perfinject(1) lists how)",
			    argv[0]);
		if (!records)
			say("this kernel has no JIT code records: perf names the code from the runtime's own files, as without this command; 'perfinject list PID' shows what the bridge saw");
	}
	execv(path, argv);
	rc = errno == ENOENT ? 127 : 126;
	say("%s: %s", path, strerror(errno));
	return rc;
}

/* ---- list ---- */

struct code_list {
	struct perfinject_code *v;
	char **names;
	size_t nr, cap;
};

static int list_add(const struct perfinject_code *code, void *ctx)
{
	struct code_list *l = ctx;

	if (l->nr == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 1024;
		void *v = realloc(l->v, cap * sizeof(*l->v));

		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->nr] = *code;
	l->v[l->nr].name = strdup(code->name ? code->name : "");
	if (!l->v[l->nr].name)
		return -1;
	l->nr++;
	return 0;
}

static int by_addr(const void *a, const void *b)
{
	const struct perfinject_code *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmd_list(int argc, char **argv)
{
	struct code_list l = { 0 };
	char *end;
	long pid;
	size_t i;
	int n;

	if (argc != 2) {
		usage(stderr);
		return 2;
	}
	errno = 0;
	pid = strtol(argv[1], &end, 10);
	if (errno || *end || pid <= 0 || pid > INT_MAX) {
		say("list: '%s' is no process id", argv[1]);
		return 2;
	}
	n = perfinject_registry__read_pid(pid, 0, list_add, &l);
	if (n == -ENOENT) {
		say("process %ld has no libperfinject registry (no libperfinject in it, or no such process)",
		    pid);
		return 1;
	}
	if (n < 0) {
		say("reading the registry of process %ld: %s", pid,
		    strerror(-n));
		return 1;
	}
	if ((size_t)n != l.nr) {
		say("out of memory reading the registry of process %ld", pid);
		return 1;
	}
	qsort(l.v, l.nr, sizeof(*l.v), by_addr);
	for (i = 0; i < l.nr; i++) {
		printf("%" PRIx64 " %" PRIx64 " %s\n", l.v[i].addr, l.v[i].len,
		       l.v[i].name);
		free((char *)l.v[i].name);
	}
	free(l.v);
	if (fflush(stdout) || ferror(stdout)) {
		say("writing: %s", strerror(errno));
		return 1;
	}
	return 0;
}

/* ---- status ---- */

static int cmd_status(void)
{
	char bridge[PATH_MAX];
	FILE *f;
	int paranoid = 99;

	printf("kernel JIT code records (PR_PERF_JIT_CODE): %s\n",
	       kernel_has_records() ? "yes" :
	       "no (perf reads the runtimes' own files)");
	printf("bridge: %s\n", find_bridge(NULL, bridge, sizeof(bridge)) ?
	       bridge : "not found");
	f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (f) {
		if (fscanf(f, "%d", &paranoid) == 1)
			printf("perf_event_paranoid: %d%s\n", paranoid,
			       paranoid > 1 ?
			       " (profiling another user's process, or the kernel, needs privileges)" :
			       "");
		fclose(f);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return cmd_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "status"))
		return cmd_status();
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("perfinject %d.%d (libperfinject-bridge)\n",
		       perfinject_version_major(), perfinject_version_minor());
		return 0;
	}
	say("unknown command '%s'", argv[1]);
	usage(stderr);
	return 2;
}
