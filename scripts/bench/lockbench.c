/*
 * lockbench - the lock microbenchmark of the papers, as an ordinary pthread
 * program: it knows nothing of lockswap, so it measures glibc natively and
 * any lockswap algorithm under the shim (`lockswap -a ALGO -- lockbench ...`).
 *
 * Model (He/Scherer/Scott TR 867 section 4, Scott TR 773 section 3, Marathe/
 * Moir/Shavit IPDPS 2006 section 4): T threads repeatedly pick one of K
 * locks, acquire it (lock, trylock retried, or timedlock with a patience P
 * retried immediately after a timeout), run a critical section that updates
 * C shared cache lines, release, then run a non-critical section of N ns of
 * local work (a calibrated arithmetic loop, the papers' "idle loop"), for D
 * seconds or a fixed number of acquisitions per thread.
 *
 * Around that loop:
 *   - E external load threads or processes that only spin (the papers'
 *     "M.N" configurations: M lock threads, N load threads);
 *   - a synthetic scheduler (TR 867 section 4): a per-thread POSIX timer
 *     sends a signal every PERIOD to a chosen fraction of the lock threads,
 *     and the handler spins for QUANTUM, i.e. deterministic preemption of
 *     lock holders and waiters on any machine; time spent in the handler is
 *     reported per thread;
 *   - latency: one acquisition in K is timed with clock_gettime (vDSO, no
 *     syscall) into a per-thread reservoir, so the run is not disturbed;
 *   - clusters (--clusters, or LOCKSWAP_CLUSTER=thread:N as lockswap reads
 *     it): each hand-off (an acquisition by another thread than the lock's
 *     previous holder) is local if both threads are in one cluster; the run
 *     reports the local fraction and the longest run of consecutive local
 *     hand-offs, and --remote-ns makes a thread that takes a lock from a
 *     holder of another cluster spend that much more inside the critical
 *     section (the remote misses on the protected data of a NUMA machine,
 *     simulated on one without). Under thread:N the threads register in a
 *     fixed order, the main thread first and then each worker before the
 *     next is created, with one lock/unlock of a private mutex each: that
 *     is the order in which lockswap's hierarchical locks number them
 *     (locks/hier/topo.h), so both sides agree on every thread's cluster;
 *   - mutual exclusion: each lock protects a counter incremented with a
 *     plain load and store, and an "inside" flag; at the end the counters
 *     must sum to the acquisitions counted by the threads and no thread may
 *     have found the flag set. A mismatch is an error (exit status 3).
 *
 * The lock is a pthread_mutex_t, or (--lock) a pthread_rwlock_t or a
 * pthread_spinlock_t. With an rwlock a fraction of the acquisitions (--read)
 * are reads, whose critical section only reads: the C lines (a writer sets
 * them all to one new value, so a reader that finds two values saw a writer
 * inside) and the "inside" flag (set by a writer: a reader must never see
 * it); the counter then sums the writes. Readers write nothing shared, so
 * that the benchmark measures the lock's read scalability, not the cost of
 * a counter of its own.
 *
 * Exit status: 0 ok, 1 a pthread call failed, 2 bad option, 3 mutual
 * exclusion violated.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 1024
#define MAX_LOCKS 4096
#define MAX_LINES 1024
#define RESERVOIR 2048 /* latency samples kept per thread */

enum mode { M_LOCK, M_TRYLOCK, M_TIMEDLOCK, M_CLOCKLOCK };
static const char *const mode_names[] = {"lock", "trylock", "timedlock", "clocklock"};

enum lock_kind { K_MUTEX, K_RWLOCK, K_SPIN };
static const char *const kind_names[] = {"mutex", "rwlock", "spin"};

struct type_name {
	const char *name;
	int type; /* -1: default attributes (NULL) */
};
static const struct type_name types[] = {
    {"default", -1},
    {"normal", PTHREAD_MUTEX_NORMAL},
    {"recursive", PTHREAD_MUTEX_RECURSIVE},
    {"errorcheck", PTHREAD_MUTEX_ERRORCHECK},
    {"adaptive", PTHREAD_MUTEX_ADAPTIVE_NP},
};

static struct config {
	unsigned threads;
	double duration; /* seconds; used when iterations == 0 */
	uint64_t iterations;
	unsigned cs_lines;
	uint64_t cs_ns;
	uint64_t ncs_ns;
	unsigned locks;
	double skew;
	enum mode mode;
	uint64_t patience_us;
	unsigned load;
	bool load_procs;
	double preempt;
	uint64_t quantum_us, period_us;
	bool pin;
	size_t type; /* index in types[] */
	enum lock_kind kind;
	double read;	/* rwlock: fraction of acquisitions that read */
	bool rw_writer; /* rwlock: PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP */
	unsigned sample;
	uint64_t seed;
	const char *label;
	bool csv;
	unsigned clusters; /* thread:N; 0: none (or cpus) */
	unsigned ncpu_map; /* cpus:LIST: entries */
	int cpu_map[1024]; /* cpus:LIST: cluster of CPU i */
	uint64_t remote_ns;
	char clusters_spec[64];
} cfg = {
    .threads = 2,
    .duration = 1.0,
    .cs_lines = 2,
    .ncs_ns = 1000,
    .locks = 1,
    .patience_us = 50,
    .quantum_us = 1000,
    .period_us = 10000,
    .sample = 64,
    .seed = 1,
};

/* The CSV columns, in order; print_csv writes them in the same order. */
static const char csv_header[] =
    "algo,wait,mode,type,threads,locks,skew,cs_lines,cs_ns,ncs_ns,patience_us,load,load_kind,"
    "preempt,preempted_threads,quantum_us,period_us,pin,seconds,acquisitions,attempts,failed,"
    "success,acq_per_s,ns_per_acq,min_thread,max_thread,jain,handoff,lat_p50_ns,lat_p99_ns,"
    "lat_max_ns,lat_samples,signals,handler_ms,cpus,kernel,per_thread,handler_ms_per_thread,"
    "clusters,remote_ns,local_handoff,longest_local_run,lock_kind,read_fraction,reads,writes";

struct line {
	alignas(64) _Atomic uint64_t v;
};

/* One lock and what it protects. The lock has its own cache line; the
 * bookkeeping (counter, inside flag, last holder) is one more line that every
 * critical section touches (a reader's only reads it); then the C lines of
 * the critical section. */
struct slot {
	alignas(64) union {
		pthread_mutex_t m;
		pthread_rwlock_t rw;
		pthread_spinlock_t sp;
	};
	alignas(64) _Atomic uint64_t counter;
	_Atomic uint32_t inside;
	_Atomic int32_t last;
	_Atomic int32_t last_cluster; /* -1: no holder yet */
	_Atomic uint64_t run;	      /* consecutive local hand-offs */
	struct line *cs;
};

struct worker {
	alignas(64) unsigned id;
	pthread_t tid;
	uint64_t rng;
	uint64_t acq, attempts, failed, handoffs, cl_handoffs, local_handoffs, longest_run;
	uint64_t reads; /* rwlock: of acq */
	int cluster;	/* thread:N: fixed at registration */
	pid_t ktid;	/* kernel thread id, for the cluster report */
	uint64_t sink;
	/* latency reservoir */
	uint64_t lat_seen, lat_kept, lat_max;
	uint64_t *lat;
	unsigned sample_ctr;
	/* synthetic scheduler: written by this thread's own signal handler */
	bool preempted;
	_Atomic uint64_t handler_ns, signals;
	char err[160];
};

static struct slot *slots;
static struct worker *workers;
static alignas(64) _Atomic int stop_flag;
static alignas(64) _Atomic uint64_t violations;
static alignas(64) _Atomic int load_stop;
static pthread_barrier_t start_barrier;
static uint64_t ncs_iters, cs_iters; /* loop iterations for ncs_ns, cs_ns */
static uint64_t remote_iters;	     /* for remote_ns */
static double ns_per_iter;	     /* calibration */
static cpu_set_t allowed_cpus;	     /* for --pin */
static int allowed_count;
static uint64_t quantum_ns;
static _Thread_local struct worker *self; /* for the signal handler */

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rnd(uint64_t *s) /* xorshift64* */
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* Local work: a serial chain of multiply-adds the compiler cannot shorten. */
static uint64_t work(uint64_t iters, uint64_t x)
{
	for (uint64_t i = 0; i < iters; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

static void calibrate(void)
{
	const uint64_t n = 1u << 18;
	uint64_t best = UINT64_MAX, sink = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = now_ns();
		sink += work(n, sink + 1);
		uint64_t t = now_ns() - t0;
		if (t < best)
			best = t;
	}
	ns_per_iter = (double)best / (double)n;
	if (ns_per_iter <= 0)
		ns_per_iter = 0.1;
	ncs_iters = (uint64_t)((double)cfg.ncs_ns / ns_per_iter + 0.5);
	cs_iters = (uint64_t)((double)cfg.cs_ns / ns_per_iter + 0.5);
	remote_iters = (uint64_t)((double)cfg.remote_ns / ns_per_iter + 0.5);
	if (sink == 42) /* keep the result alive */
		fputc(' ', stderr);
}

/* ---- options --------------------------------------------------------- */

static _Noreturn void bad(const char *opt, const char *val, const char *expect)
{
	fprintf(stderr, "lockbench: %s: invalid value '%s' (expected %s); see --help\n", opt, val, expect);
	exit(2);
}

static uint64_t parse_u(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	char expect[96], *end;
	snprintf(expect, sizeof expect, "an integer %llu..%llu", (unsigned long long)min,
		 (unsigned long long)max);
	if (*s < '0' || *s > '9')
		bad(opt, s, expect);
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		bad(opt, s, expect);
	return v;
}

static double parse_d(const char *opt, const char *s, double min, double max, bool min_open)
{
	char expect[96], *end;
	snprintf(expect, sizeof expect, "a number %s%g..%g", min_open ? "> " : "", min, max);
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min || v > max || (min_open && v == min))
		bad(opt, s, expect);
	return v;
}

static void usage(FILE *f)
{
	fputs("usage: lockbench [OPTION]...\n"
	      "The lock microbenchmark of the papers: T threads acquire a lock, update C shared\n"
	      "cache lines, release it, then do N ns of local work, for D seconds. An ordinary\n"
	      "pthread program: run it as is for glibc, or `lockswap -a ALGO -- lockbench ...`.\n"
	      "\n"
	      "Workload:\n"
	      "  -t, --threads T      lock threads (1..1024; default 2)\n"
	      "  -d, --duration S     run for S seconds (default 1; fractions allowed)\n"
	      "  -n, --iterations N   instead of -d, each thread does N acquisitions\n"
	      "  -c, --cs-lines C     shared cache lines updated in the critical section\n"
	      "                       (0..1024; default 2), plus one line of bookkeeping\n"
	      "      --cs-ns NS       also NS ns of local work inside the critical section\n"
	      "                       (0..1e9; default 0)\n"
	      "  -N, --ncs NS         non-critical section: NS ns of local work, a loop\n"
	      "                       calibrated at start-up (0..1e9; default 1000)\n"
	      "  -k, --locks K        K locks, one chosen at random per acquisition (default 1)\n"
	      "      --skew F         fraction F of acquisitions go to lock 0, the rest are\n"
	      "                       uniform over all K (0..1; default 0: uniform)\n"
	      "  -m, --mode MODE      lock: pthread_mutex_lock (default)\n"
	      "                       trylock: pthread_mutex_trylock retried until it succeeds\n"
	      "                       timedlock: pthread_mutex_timedlock with patience P\n"
	      "                       (CLOCK_REALTIME deadline), retried at once on timeout\n"
	      "                       clocklock: same with pthread_mutex_clocklock, CLOCK_MONOTONIC\n"
	      "  -p, --patience US    patience for timedlock/clocklock in us (1..1e7; default 50)\n"
	      "      --type TYPE      mutex type: default (NULL attributes), normal, recursive,\n"
	      "                       errorcheck, adaptive\n"
	      "  -L, --lock KIND      the lock: mutex (pthread_mutex_t, default), rwlock\n"
	      "                       (pthread_rwlock_t: the modes take rdlock or wrlock and their\n"
	      "                       try, timed and clock variants), spin (pthread_spinlock_t:\n"
	      "                       lock and trylock modes only)\n"
	      "  -r, --read F         rwlock: a fraction F of the acquisitions are reads (0..1;\n"
	      "                       default 0.9; implies --lock rwlock); a read's critical\n"
	      "                       section reads the C lines and writes nothing shared\n"
	      "      --rwkind KIND    rwlock: default (glibc's reader preference) or writer\n"
	      "                       (PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)\n"
	      "\n"
	      "Environment of the run:\n"
	      "  -e, --load E         E external load threads that only spin (default 0)\n"
	      "      --load-kind K    thread (default) or process: the load runs as separate\n"
	      "                       processes, like another application\n"
	      "      --preempt F      synthetic scheduler: a fraction F of the lock threads\n"
	      "                       (rounded; 0..1, default 0) receive a signal every PERIOD\n"
	      "                       whose handler spins for QUANTUM, preempting lock holders\n"
	      "                       and waiters deterministically\n"
	      "      --quantum US     handler spin time (default 1000)\n"
	      "      --period US      signal period per preempted thread (default 10000;\n"
	      "                       must exceed the quantum)\n"
	      "      --pin            pin lock thread i to allowed CPU i mod ncpu, load threads\n"
	      "                       after them\n"
	      "      --seed S         seed of the lock choice (default 1)\n"
	      "      --clusters SPEC  what a cluster is, for the hand-off statistics:\n"
	      "                       thread:N  the k-th thread is in cluster k mod N, the main\n"
	      "                       thread being #0 and worker i #i+1 (lockswap's rule for\n"
	      "                       LOCKSWAP_CLUSTER=thread:N; they register in that order)\n"
	      "                       cpus:C0,C1,...  the cluster of the CPU a thread runs on\n"
	      "                       when it acquires (`lockswap --topology=table` prints it)\n"
	      "                       none; default: LOCKSWAP_CLUSTER if it is thread:N[/G]\n"
	      "      --remote-ns NS   a thread that takes a lock from a holder of another\n"
	      "                       cluster spends NS ns more in the critical section\n"
	      "                       (0..1e9; default 0; needs --clusters)\n"
	      "\n"
	      "Measurement and output:\n"
	      "      --sample K       time one acquisition in K (default 64; 0: no latency)\n"
	      "      --label NAME     algorithm name in the report (default: LOCKSWAP_ALGO when\n"
	      "                       liblockswap is preloaded, else glibc, or preload:LIB)\n"
	      "      --csv            print one CSV line instead of the summary\n"
	      "      --csv-header     print the CSV header line and exit\n"
	      "  -h, --help           this text\n"
	      "\n"
	      "Reported: acquisitions/s and ns per acquisition (an rwlock's reads and writes apart);\n"
	      "attempts, failed attempts (timeouts,\n"
	      "or EBUSY in trylock mode) and success rate (acquisitions / attempts); per-thread acquisitions "
	      "with min, max and\n"
	      "Jain's fairness index; handoff rate (fraction of acquisitions by a thread other\n"
	      "than the previous holder of that lock); latency p50, p99, max of the sampled\n"
	      "acquisitions (from the first attempt to success); per-thread signals and time in\n"
	      "the synthetic scheduler's handler; the environment (algorithm, LOCKSWAP_WAIT,\n"
	      "CPUs, kernel); with clusters, the fraction of hand-offs that stayed inside a\n"
	      "cluster and the longest run of consecutive local hand-offs of one lock.\n"
	      "Mutual exclusion is checked on every run (see the exit status).\n"
	      "\n"
	      "Exit status: 0 ok, 1 a pthread call failed, 2 bad option, 3 mutual exclusion\n"
	      "violated (counter mismatch or two threads inside a critical section).\n",
	      f);
}

/* --clusters: thread:N[/G] (G is lockswap's, ignored here), cpus:LIST or none. */
static void parse_clusters(const char *s)
{
	static const char expect[] = "thread:N (1..64), thread:N/G, cpus:C0,C1,... or none";
	snprintf(cfg.clusters_spec, sizeof cfg.clusters_spec, "%s", s);
	if (!strcmp(s, "none")) {
		snprintf(cfg.clusters_spec, sizeof cfg.clusters_spec, "-");
		return;
	}
	if (!strncmp(s, "thread:", 7)) {
		char *end;
		errno = 0;
		unsigned long n = strtoul(s + 7, &end, 10);
		if (s[7] < '0' || s[7] > '9' || errno || n < 1 || n > 64 || (*end && *end != '/'))
			bad("--clusters", s, expect);
		if (*end == '/') {
			char *e2;
			unsigned long g = strtoul(end + 1, &e2, 10);
			if (end[1] < '0' || end[1] > '9' || *e2 || g < 2 || g >= n)
				bad("--clusters", s, expect);
		}
		cfg.clusters = (unsigned)n;
		return;
	}
	if (!strncmp(s, "cpus:", 5)) {
		const char *p = s + 5;
		while (*p) {
			char *end;
			if (*p < '0' || *p > '9' || cfg.ncpu_map == sizeof cfg.cpu_map / sizeof *cfg.cpu_map)
				bad("--clusters", s, expect);
			cfg.cpu_map[cfg.ncpu_map++] = (int)strtol(p, &end, 10);
			p = end;
			if (*p == ',')
				p++;
			else if (*p)
				bad("--clusters", s, expect);
		}
		if (!cfg.ncpu_map)
			bad("--clusters", s, expect);
		snprintf(cfg.clusters_spec, sizeof cfg.clusters_spec, "cpus");
		return;
	}
	bad("--clusters", s, expect);
}

static void parse_args(int argc, char **argv)
{
	enum {
		O_SKEW = 256,
		O_LOADKIND,
		O_PREEMPT,
		O_QUANTUM,
		O_PERIOD,
		O_PIN,
		O_TYPE,
		O_SAMPLE,
		O_SEED,
		O_LABEL,
		O_CSV,
		O_HEADER,
		O_CSNS,
		O_CLUSTERS,
		O_REMOTE,
		O_RWKIND
	};
	static const struct option opts[] = {
	    {"threads", required_argument, 0, 't'},
	    {"duration", required_argument, 0, 'd'},
	    {"iterations", required_argument, 0, 'n'},
	    {"cs-lines", required_argument, 0, 'c'},
	    {"ncs", required_argument, 0, 'N'},
	    {"cs-ns", required_argument, 0, O_CSNS},
	    {"locks", required_argument, 0, 'k'},
	    {"skew", required_argument, 0, O_SKEW},
	    {"mode", required_argument, 0, 'm'},
	    {"patience", required_argument, 0, 'p'},
	    {"type", required_argument, 0, O_TYPE},
	    {"load", required_argument, 0, 'e'},
	    {"load-kind", required_argument, 0, O_LOADKIND},
	    {"preempt", required_argument, 0, O_PREEMPT},
	    {"quantum", required_argument, 0, O_QUANTUM},
	    {"period", required_argument, 0, O_PERIOD},
	    {"pin", no_argument, 0, O_PIN},
	    {"seed", required_argument, 0, O_SEED},
	    {"sample", required_argument, 0, O_SAMPLE},
	    {"label", required_argument, 0, O_LABEL},
	    {"csv", no_argument, 0, O_CSV},
	    {"csv-header", no_argument, 0, O_HEADER},
	    {"clusters", required_argument, 0, O_CLUSTERS},
	    {"remote-ns", required_argument, 0, O_REMOTE},
	    {"lock", required_argument, 0, 'L'},
	    {"read", required_argument, 0, 'r'},
	    {"rwkind", required_argument, 0, O_RWKIND},
	    {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0},
	};
	bool header = false, have_d = false, have_n = false, have_read = false, have_kind = false,
	     have_type = false, have_rwkind = false;
	const char *clusters = getenv("LOCKSWAP_CLUSTER");
	if (clusters && strncmp(clusters, "thread:", 7))
		clusters = NULL; /* a level of the machine: not known here */
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:d:n:c:N:k:m:p:e:L:r:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			cfg.threads = (unsigned)parse_u("--threads", optarg, 1, MAX_THREADS);
			break;
		case 'd':
			cfg.duration = parse_d("--duration", optarg, 0, 3600, true);
			have_d = true;
			break;
		case 'n':
			cfg.iterations = parse_u("--iterations", optarg, 1, UINT64_C(1) << 40);
			have_n = true;
			break;
		case 'c':
			cfg.cs_lines = (unsigned)parse_u("--cs-lines", optarg, 0, MAX_LINES);
			break;
		case 'N':
			cfg.ncs_ns = parse_u("--ncs", optarg, 0, 1000000000);
			break;
		case O_CSNS:
			cfg.cs_ns = parse_u("--cs-ns", optarg, 0, 1000000000);
			break;
		case 'k':
			cfg.locks = (unsigned)parse_u("--locks", optarg, 1, MAX_LOCKS);
			break;
		case O_SKEW:
			cfg.skew = parse_d("--skew", optarg, 0, 1, false);
			break;
		case 'm': {
			size_t i;
			for (i = 0; i < sizeof mode_names / sizeof *mode_names; i++)
				if (!strcmp(optarg, mode_names[i]))
					break;
			if (i == sizeof mode_names / sizeof *mode_names)
				bad("--mode", optarg, "lock, trylock, timedlock or clocklock");
			cfg.mode = (enum mode)i;
			break;
		}
		case 'p':
			cfg.patience_us = parse_u("--patience", optarg, 1, 10000000);
			break;
		case O_TYPE: {
			size_t i;
			for (i = 0; i < sizeof types / sizeof *types; i++)
				if (!strcmp(optarg, types[i].name))
					break;
			if (i == sizeof types / sizeof *types)
				bad("--type", optarg, "default, normal, recursive, errorcheck or adaptive");
			cfg.type = i;
			have_type = true;
			break;
		}
		case 'L': {
			size_t i;
			for (i = 0; i < sizeof kind_names / sizeof *kind_names; i++)
				if (!strcmp(optarg, kind_names[i]))
					break;
			if (i == sizeof kind_names / sizeof *kind_names)
				bad("--lock", optarg, "mutex, rwlock or spin");
			cfg.kind = (enum lock_kind)i;
			have_kind = true;
			break;
		}
		case 'r':
			cfg.read = parse_d("--read", optarg, 0, 1, false);
			have_read = true;
			break;
		case O_RWKIND:
			if (!strcmp(optarg, "default"))
				cfg.rw_writer = false;
			else if (!strcmp(optarg, "writer"))
				cfg.rw_writer = true;
			else
				bad("--rwkind", optarg, "default or writer");
			have_rwkind = true;
			break;
		case 'e':
			cfg.load = (unsigned)parse_u("--load", optarg, 0, MAX_THREADS);
			break;
		case O_LOADKIND:
			if (!strcmp(optarg, "thread"))
				cfg.load_procs = false;
			else if (!strcmp(optarg, "process"))
				cfg.load_procs = true;
			else
				bad("--load-kind", optarg, "thread or process");
			break;
		case O_PREEMPT:
			cfg.preempt = parse_d("--preempt", optarg, 0, 1, false);
			break;
		case O_QUANTUM:
			cfg.quantum_us = parse_u("--quantum", optarg, 1, 10000000);
			break;
		case O_PERIOD:
			cfg.period_us = parse_u("--period", optarg, 2, 100000000);
			break;
		case O_PIN:
			cfg.pin = true;
			break;
		case O_SEED:
			cfg.seed = parse_u("--seed", optarg, 0, UINT64_MAX);
			break;
		case O_SAMPLE:
			cfg.sample = (unsigned)parse_u("--sample", optarg, 0, 1000000);
			break;
		case O_LABEL:
			if (!*optarg || strpbrk(optarg, ",\"\n"))
				bad("--label", optarg, "a non-empty name without commas or quotes");
			cfg.label = optarg;
			break;
		case O_CSV:
			cfg.csv = true;
			break;
		case O_HEADER:
			header = true;
			break;
		case O_CLUSTERS:
			clusters = optarg;
			break;
		case O_REMOTE:
			cfg.remote_ns = parse_u("--remote-ns", optarg, 0, 1000000000);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			fprintf(stderr, "lockbench: option '%s' needs a value; see --help\n",
				argv[optind - 1]);
			exit(2);
		default:
			if (optopt)
				fprintf(stderr, "lockbench: unknown option '-%c'; see --help\n", optopt);
			else
				fprintf(stderr, "lockbench: unknown option '%s'; see --help\n",
					argv[optind - 1]);
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "lockbench: unexpected argument '%s'; see --help\n", argv[optind]);
		exit(2);
	}
	if (have_d && have_n) {
		fprintf(stderr, "lockbench: --duration and --iterations exclude each other\n");
		exit(2);
	}
	if (cfg.preempt > 0 && cfg.quantum_us >= cfg.period_us) {
		fprintf(stderr, "lockbench: --quantum %llu must be less than --period %llu\n",
			(unsigned long long)cfg.quantum_us, (unsigned long long)cfg.period_us);
		exit(2);
	}
	if (cfg.skew > 0 && cfg.locks < 2) {
		fprintf(stderr, "lockbench: --skew needs --locks 2 or more\n");
		exit(2);
	}
	if (have_read && have_kind && cfg.kind != K_RWLOCK) {
		fprintf(stderr, "lockbench: --read is for --lock rwlock, not %s\n", kind_names[cfg.kind]);
		exit(2);
	}
	if (have_read)
		cfg.kind = K_RWLOCK;
	else if (cfg.kind == K_RWLOCK)
		cfg.read = 0.9;
	if (have_rwkind && cfg.kind != K_RWLOCK) {
		fprintf(stderr, "lockbench: --rwkind is for --lock rwlock, not %s\n", kind_names[cfg.kind]);
		exit(2);
	}
	if (have_type && cfg.kind != K_MUTEX) {
		fprintf(stderr, "lockbench: --type is for --lock mutex, not %s\n", kind_names[cfg.kind]);
		exit(2);
	}
	if (cfg.kind == K_SPIN && cfg.mode != M_LOCK && cfg.mode != M_TRYLOCK) {
		fprintf(stderr, "lockbench: --lock spin has no %s mode (valid: lock, trylock)\n",
			mode_names[cfg.mode]);
		exit(2);
	}
	if (header) {
		puts(csv_header);
		exit(0);
	}
	if (clusters)
		parse_clusters(clusters);
	if (cfg.remote_ns && !cfg.clusters && !cfg.ncpu_map) {
		fprintf(stderr,
			"lockbench: --remote-ns needs clusters (--clusters, or LOCKSWAP_CLUSTER=thread:N)\n");
		exit(2);
	}
}

/* ---- the benchmark ---------------------------------------------------- */

static _Noreturn void die(const char *what, int err)
{
	fprintf(stderr, "lockbench: %s: %s\n", what, strerror(err));
	exit(1);
}

static void check(struct worker *w, const char *what, int r)
{
	if (__builtin_expect(r == 0, 1))
		return;
	snprintf(w->err, sizeof w->err, "%s: %s", what, strerror(r));
	die(w->err, r);
}

static void on_tick(int sig)
{
	(void)sig;
	struct worker *w = self;
	if (!w)
		return;
	int saved = errno;
	uint64_t t0 = now_ns(), t;
	while ((t = now_ns()) - t0 < quantum_ns)
		cpu_relax();
	atomic_store_explicit(&w->handler_ns,
			      atomic_load_explicit(&w->handler_ns, memory_order_relaxed) + (t - t0),
			      memory_order_relaxed);
	atomic_store_explicit(&w->signals, atomic_load_explicit(&w->signals, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	errno = saved;
}

static timer_t arm_timer(struct worker *w, unsigned rank, unsigned npre)
{
	struct sigevent sev = {0};
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGRTMIN;
	/* glibc 2.36 names the field only through this union member. */
	sev._sigev_un._tid = gettid();
	timer_t t;
	if (timer_create(CLOCK_MONOTONIC, &sev, &t))
		die("timer_create", errno);
	/* Stagger the preempted threads over one period. */
	uint64_t period = cfg.period_us * 1000, first = period + period * rank / npre;
	struct itimerspec its = {
	    .it_interval = {(time_t)(period / 1000000000), (long)(period % 1000000000)},
	    .it_value = {(time_t)(first / 1000000000), (long)(first % 1000000000)},
	};
	if (timer_settime(t, 0, &its, NULL))
		die("timer_settime", errno);
	(void)w;
	return t;
}

static void record_latency(struct worker *w, uint64_t d)
{
	w->lat_seen++;
	if (d > w->lat_max)
		w->lat_max = d;
	if (w->lat_kept < RESERVOIR) {
		w->lat[w->lat_kept++] = d;
	} else {
		uint64_t j = rnd(&w->rng) % w->lat_seen;
		if (j < RESERVOIR)
			w->lat[j] = d;
	}
}

/* The cluster of the calling thread now. */
static int cluster_now(struct worker *w)
{
	if (cfg.clusters)
		return w->cluster;
	int cpu = sched_getcpu(); /* vDSO */
	return cpu >= 0 ? cfg.cpu_map[(unsigned)cpu % cfg.ncpu_map] : 0;
}

/* A hand-off of s to w: local or not, the run, the remote penalty. */
static void cluster_handoff(struct slot *s, struct worker *w)
{
	int c = cluster_now(w), prev = atomic_load_explicit(&s->last_cluster, memory_order_relaxed);
	atomic_store_explicit(&s->last_cluster, c, memory_order_relaxed);
	if (prev < 0)
		return; /* the first holder: no hand-off */
	w->cl_handoffs++;
	if (prev == c) {
		w->local_handoffs++;
		uint64_t run = atomic_load_explicit(&s->run, memory_order_relaxed) + 1;
		atomic_store_explicit(&s->run, run, memory_order_relaxed);
		if (run > w->longest_run)
			w->longest_run = run;
		return;
	}
	atomic_store_explicit(&s->run, 0, memory_order_relaxed);
	if (remote_iters)
		w->sink = work(remote_iters, w->sink);
}

/* The critical section. Plain (relaxed) loads and stores only: a broken lock
 * shows as lost counter updates or as a thread finding `inside` set. The
 * signal fences keep the compiler from merging or moving the flag stores. */
static void critical(struct slot *s, struct worker *w)
{
	if (atomic_load_explicit(&s->inside, memory_order_relaxed))
		atomic_fetch_add_explicit(&violations, 1, memory_order_relaxed);
	atomic_store_explicit(&s->inside, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&s->last, memory_order_relaxed) != (int32_t)w->id) {
		w->handoffs++;
		atomic_store_explicit(&s->last, (int32_t)w->id, memory_order_relaxed);
		if (cfg.clusters || cfg.ncpu_map)
			cluster_handoff(s, w);
	}
	if (cs_iters)
		w->sink = work(cs_iters, w->sink);
	for (unsigned i = 0; i < cfg.cs_lines; i++)
		atomic_store_explicit(&s->cs[i].v,
				      atomic_load_explicit(&s->cs[i].v, memory_order_relaxed) + 1,
				      memory_order_relaxed);
	atomic_store_explicit(&s->counter, atomic_load_explicit(&s->counter, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&s->inside, 0, memory_order_relaxed);
}

static unsigned pick(struct worker *w)
{
	if (cfg.locks == 1)
		return 0;
	uint64_t r = rnd(&w->rng);
	if (cfg.skew > 0 && (double)(r >> 11) * 0x1p-53 < cfg.skew)
		return 0;
	return (unsigned)(rnd(&w->rng) % cfg.locks);
}

static struct timespec deadline(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	uint64_t ns = (uint64_t)ts.tv_nsec + cfg.patience_us * 1000;
	ts.tv_sec += (time_t)(ns / 1000000000);
	ts.tv_nsec = (long)(ns % 1000000000);
	return ts;
}

static bool stopping(const struct worker *w)
{
	if (cfg.iterations)
		return w->acq >= cfg.iterations;
	return atomic_load_explicit(&stop_flag, memory_order_relaxed) != 0;
}

/* One attempt at s's lock, of the configured kind and mode (a read if
 * `read`): 0, or EBUSY / ETIMEDOUT. The name of the call, for errors. */
static int attempt(struct slot *s, bool read, const char **what)
{
	struct timespec ts;
	if (cfg.mode == M_TIMEDLOCK)
		ts = deadline(CLOCK_REALTIME);
	else if (cfg.mode == M_CLOCKLOCK)
		ts = deadline(CLOCK_MONOTONIC);
	switch (cfg.kind) {
	case K_MUTEX:
		switch (cfg.mode) {
		case M_LOCK:
			*what = "pthread_mutex_lock";
			return pthread_mutex_lock(&s->m);
		case M_TRYLOCK:
			*what = "pthread_mutex_trylock";
			return pthread_mutex_trylock(&s->m);
		case M_TIMEDLOCK:
			*what = "pthread_mutex_timedlock";
			return pthread_mutex_timedlock(&s->m, &ts);
		default:
			*what = "pthread_mutex_clocklock";
			return pthread_mutex_clocklock(&s->m, CLOCK_MONOTONIC, &ts);
		}
	case K_RWLOCK:
		switch (cfg.mode) {
		case M_LOCK:
			*what = read ? "pthread_rwlock_rdlock" : "pthread_rwlock_wrlock";
			return read ? pthread_rwlock_rdlock(&s->rw) : pthread_rwlock_wrlock(&s->rw);
		case M_TRYLOCK:
			*what = read ? "pthread_rwlock_tryrdlock" : "pthread_rwlock_trywrlock";
			return read ? pthread_rwlock_tryrdlock(&s->rw) : pthread_rwlock_trywrlock(&s->rw);
		case M_TIMEDLOCK:
			*what = read ? "pthread_rwlock_timedrdlock" : "pthread_rwlock_timedwrlock";
			return read ? pthread_rwlock_timedrdlock(&s->rw, &ts)
				    : pthread_rwlock_timedwrlock(&s->rw, &ts);
		default:
			*what = read ? "pthread_rwlock_clockrdlock" : "pthread_rwlock_clockwrlock";
			return read ? pthread_rwlock_clockrdlock(&s->rw, CLOCK_MONOTONIC, &ts)
				    : pthread_rwlock_clockwrlock(&s->rw, CLOCK_MONOTONIC, &ts);
		}
	default:
		*what = cfg.mode == M_LOCK ? "pthread_spin_lock" : "pthread_spin_trylock";
		return cfg.mode == M_LOCK ? pthread_spin_lock(&s->sp) : pthread_spin_trylock(&s->sp);
	}
}

/* Acquires s's lock by the configured mode (for reading if `read`); false
 * if the run ended first (only in the retrying modes). */
static bool acquire(struct worker *w, struct slot *s, bool read)
{
	for (;;) {
		const char *what;
		w->attempts++;
		int r = attempt(s, read, &what);
		if (r == 0)
			return true;
		if (r != (cfg.mode == M_TRYLOCK ? EBUSY : ETIMEDOUT) || cfg.mode == M_LOCK)
			check(w, what, r);
		w->failed++;
		if (stopping(w))
			return false;
		if (cfg.mode == M_TRYLOCK)
			cpu_relax();
	}
}

static void release(struct worker *w, struct slot *s)
{
	switch (cfg.kind) {
	case K_MUTEX:
		check(w, "pthread_mutex_unlock", pthread_mutex_unlock(&s->m));
		break;
	case K_RWLOCK:
		check(w, "pthread_rwlock_unlock", pthread_rwlock_unlock(&s->rw));
		break;
	default:
		check(w, "pthread_spin_unlock", pthread_spin_unlock(&s->sp));
	}
}

/* A read's critical section: reads the lines a writer keeps equal and the
 * writer's flag, writes nothing shared. */
static void critical_read(struct slot *s, struct worker *w)
{
	uint64_t bad = atomic_load_explicit(&s->inside, memory_order_relaxed);
	if (cs_iters)
		w->sink = work(cs_iters, w->sink);
	uint64_t v0 = cfg.cs_lines ? atomic_load_explicit(&s->cs[0].v, memory_order_relaxed) : 0;
	for (unsigned i = 1; i < cfg.cs_lines; i++)
		bad += atomic_load_explicit(&s->cs[i].v, memory_order_relaxed) != v0;
	bad += atomic_load_explicit(&s->inside, memory_order_relaxed);
	if (bad)
		atomic_fetch_add_explicit(&violations, 1, memory_order_relaxed);
}

static _Atomic int registered;

/* thread:N: one lock/unlock of a private mutex, so that a hierarchical
 * lock of lockswap numbers this thread now, in creation order (the main
 * thread before any worker). Then the main thread may create the next. */
static void register_thread(struct worker *w)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	if (pthread_mutex_lock(&m) || pthread_mutex_unlock(&m))
		die("pthread_mutex_lock", EINVAL);
	pthread_mutex_destroy(&m);
	if (w)
		atomic_store_explicit(&registered, 1, memory_order_release);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	timer_t timer = 0;
	self = w;
	w->ktid = gettid();
	if (cfg.clusters)
		register_thread(w);
	pthread_barrier_wait(&start_barrier);
	if (w->preempted) {
		unsigned npre = 0;
		for (unsigned i = 0; i < cfg.threads; i++)
			npre += workers[i].preempted;
		timer = arm_timer(w, w->id, npre);
	}
	while (!stopping(w)) {
		struct slot *s = &slots[pick(w)];
		bool read = cfg.kind == K_RWLOCK && (double)(rnd(&w->rng) >> 11) * 0x1p-53 < cfg.read;
		bool timed = cfg.sample && ++w->sample_ctr >= cfg.sample;
		uint64_t t0 = timed ? now_ns() : 0;
		if (!acquire(w, s, read))
			break;
		if (timed) {
			record_latency(w, now_ns() - t0);
			w->sample_ctr = 0;
		}
		if (read)
			critical_read(s, w);
		else
			critical(s, w);
		release(w, s);
		w->acq++;
		w->reads += read;
		w->sink = work(ncs_iters, w->sink);
	}
	if (w->preempted)
		timer_delete(timer);
	return NULL;
}

static void *load_main(void *arg)
{
	uint64_t x = (uintptr_t)arg;
	while (!atomic_load_explicit(&load_stop, memory_order_relaxed))
		x = work(1000, x);
	return (void *)(uintptr_t)(x == 42);
}

static void pin_attr(pthread_attr_t *a, unsigned i)
{
	if (!cfg.pin)
		return;
	int want = (int)(i % (unsigned)allowed_count), seen = 0;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed_cpus))
			continue;
		if (seen++ == want) {
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			int r = pthread_attr_setaffinity_np(a, sizeof one, &one);
			if (r)
				die("pthread_attr_setaffinity_np", r);
			return;
		}
	}
}

/* ---- report ---------------------------------------------------------- */

struct sample {
	uint64_t v;
	double weight;
};

static int cmp_sample(const void *a, const void *b)
{
	uint64_t x = ((const struct sample *)a)->v, y = ((const struct sample *)b)->v;
	return x < y ? -1 : x > y;
}

/* Weighted percentiles over every thread's reservoir (each kept sample of a
 * thread stands for seen/kept of its samples). */
static void percentiles(uint64_t *p50, uint64_t *p99, uint64_t *max, uint64_t *n)
{
	size_t total = 0;
	*p50 = *p99 = *max = *n = 0;
	for (unsigned i = 0; i < cfg.threads; i++) {
		total += workers[i].lat_kept;
		*n += workers[i].lat_seen;
		if (workers[i].lat_max > *max)
			*max = workers[i].lat_max;
	}
	if (!total)
		return;
	struct sample *all = malloc(total * sizeof *all);
	if (!all)
		die("malloc", ENOMEM);
	size_t k = 0;
	double wsum = 0;
	for (unsigned i = 0; i < cfg.threads; i++) {
		struct worker *w = &workers[i];
		for (uint64_t j = 0; j < w->lat_kept; j++) {
			all[k].v = w->lat[j];
			all[k].weight = (double)w->lat_seen / (double)w->lat_kept;
			wsum += all[k++].weight;
		}
	}
	qsort(all, total, sizeof *all, cmp_sample);
	double acc = 0;
	bool got50 = false;
	for (size_t j = 0; j < total; j++) {
		acc += all[j].weight;
		if (!got50 && acc >= 0.5 * wsum) {
			*p50 = all[j].v;
			got50 = true;
		}
		if (acc >= 0.99 * wsum) {
			*p99 = all[j].v;
			break;
		}
	}
	free(all);
}

/* Lock 0 is created by a function of its own, so that an algorithm map can
 * name it apart from the others (LOCKSWAP_ALGO_MAP='init_lock0=mcs,...'):
 * under --skew it is the hot lock. noipa: never merged with init_lock; the
 * empty asm after the call: not a tail call, so the function is on the
 * stack of the pthread_mutex_init it makes. */
static __attribute__((noipa)) int init_lock0(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	int r = pthread_mutex_init(m, a);
	__asm__ volatile("" ::: "memory");
	return r;
}

static __attribute__((noipa)) int init_lock(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	int r = pthread_mutex_init(m, a);
	__asm__ volatile("" ::: "memory");
	return r;
}

static void algo_name(char *buf, size_t len, char *wait, size_t wlen)
{
	static const char *const var[] = {"LOCKSWAP_ALGO", "LOCKSWAP_RWALGO", "LOCKSWAP_SPINALGO"};
	const char *pre = getenv("LD_PRELOAD"), *a = getenv(var[cfg.kind]), *wt = getenv("LOCKSWAP_WAIT");
	bool shim = pre && strstr(pre, "liblockswap");
	if (cfg.label)
		snprintf(buf, len, "%s", cfg.label);
	else if (shim)
		snprintf(buf, len, "%s", a && *a ? a : "default");
	else if (pre && *pre) {
		const char *base = strrchr(pre, '/');
		snprintf(buf, len, "preload:%s", base ? base + 1 : pre);
	} else
		snprintf(buf, len, "glibc");
	snprintf(wait, wlen, "%s", shim ? (wt && *wt ? wt : "default") : "-");
	for (char *p = buf; *p; p++)
		if (*p == ',' || *p == '"' || *p == '\n' || *p == ' ')
			*p = '_';
	for (char *p = wait; *p; p++)
		if (*p == ',' || *p == '"' || *p == '\n' || *p == ' ')
			*p = '_';
}

struct report {
	char algo[128], wait[64];
	double secs, rate, ns_per_acq, jain, success, handoff, handler_ms, local;
	uint64_t longest;
	uint64_t acq, attempts, failed, min, max, p50, p99, lat_max, lat_n, signals, counter, violations;
	uint64_t reads; /* rwlock: of acq */
	unsigned npre;
};

static void print_csv(const struct report *r)
{
	struct utsname un;
	uname(&un);
	bool timed = cfg.mode == M_TIMEDLOCK || cfg.mode == M_CLOCKLOCK;
	printf("%s,%s,%s,%s,", r->algo, r->wait, mode_names[cfg.mode],
	       cfg.kind == K_MUTEX    ? types[cfg.type].name
	       : cfg.kind == K_RWLOCK ? (cfg.rw_writer ? "writer" : "default")
				      : "-");
	printf("%u,%u,%g,%u,%llu,%llu,", cfg.threads, cfg.locks, cfg.skew, cfg.cs_lines,
	       (unsigned long long)cfg.cs_ns, (unsigned long long)cfg.ncs_ns);
	printf("%llu,%u,%s,", (unsigned long long)(timed ? cfg.patience_us : 0), cfg.load,
	       cfg.load_procs ? "process" : "thread");
	printf("%g,%u,%llu,%llu,%d,", cfg.preempt, r->npre,
	       (unsigned long long)(r->npre ? cfg.quantum_us : 0),
	       (unsigned long long)(r->npre ? cfg.period_us : 0), cfg.pin);
	printf("%.6f,%llu,%llu,%llu,%.6f,", r->secs, (unsigned long long)r->acq,
	       (unsigned long long)r->attempts, (unsigned long long)r->failed, r->success);
	printf("%.1f,%.2f,%llu,%llu,%.4f,%.4f,", r->rate, r->ns_per_acq, (unsigned long long)r->min,
	       (unsigned long long)r->max, r->jain, r->handoff);
	printf("%llu,%llu,%llu,%llu,", (unsigned long long)r->p50, (unsigned long long)r->p99,
	       (unsigned long long)r->lat_max, (unsigned long long)r->lat_n);
	printf("%llu,%.3f,%ld,%s,", (unsigned long long)r->signals, r->handler_ms,
	       sysconf(_SC_NPROCESSORS_ONLN), un.release);
	for (unsigned i = 0; i < cfg.threads; i++)
		printf("%s%llu", i ? ";" : "", (unsigned long long)workers[i].acq);
	putchar(',');
	for (unsigned i = 0; i < cfg.threads; i++)
		printf("%s%.3f", i ? ";" : "",
		       (double)atomic_load_explicit(&workers[i].handler_ns, memory_order_relaxed) / 1e6);
	if (cfg.clusters || cfg.ncpu_map)
		printf(",%s,%llu,%.4f,%llu", cfg.clusters_spec, (unsigned long long)cfg.remote_ns, r->local,
		       (unsigned long long)r->longest);
	else
		printf(",-,0,,");
	printf(",%s,%g,%llu,%llu\n", kind_names[cfg.kind], cfg.kind == K_RWLOCK ? cfg.read : 0,
	       (unsigned long long)r->reads, (unsigned long long)(r->acq - r->reads));
}

static void print_summary(const struct report *r)
{
	struct utsname un;
	uname(&un);
	printf("lockbench: %s (wait %s), %s, ", r->algo, r->wait, mode_names[cfg.mode]);
	if (cfg.kind == K_MUTEX)
		printf("%s mutex", types[cfg.type].name);
	else if (cfg.kind == K_RWLOCK)
		printf("%s rwlock, %g%% reads", cfg.rw_writer ? "writer-preferring" : "default",
		       cfg.read * 100);
	else
		printf("spinlock");
	printf(", %u thread%s, %u lock%s", cfg.threads, cfg.threads == 1 ? "" : "s", cfg.locks,
	       cfg.locks == 1 ? "" : "s");
	if (cfg.skew > 0)
		printf(" (%g%% on lock 0)", cfg.skew * 100);
	printf(", CS %u line%s", cfg.cs_lines, cfg.cs_lines == 1 ? "" : "s");
	if (cfg.cs_ns)
		printf(" + %llu ns", (unsigned long long)cfg.cs_ns);
	printf(", NCS %llu ns (%llu loop iterations, %.3f ns each)\n", (unsigned long long)cfg.ncs_ns,
	       (unsigned long long)ncs_iters, ns_per_iter);
	printf("  machine       %ld CPUs online, %d allowed, Linux %s%s\n", sysconf(_SC_NPROCESSORS_ONLN),
	       allowed_count, un.release, cfg.pin ? ", threads pinned" : "");
	if (cfg.load)
		printf("  load          %u spinning %s%s\n", cfg.load, cfg.load_procs ? "process" : "thread",
		       cfg.load == 1 ? "" : (cfg.load_procs ? "es" : "s"));
	printf("  throughput    %.0f acquisitions/s, %.1f ns each (%llu in %.3f s)\n", r->rate, r->ns_per_acq,
	       (unsigned long long)r->acq, r->secs);
	if (cfg.kind == K_RWLOCK)
		printf("  reads         %llu (%.2f%%), writes %llu\n", (unsigned long long)r->reads,
		       r->acq ? 100.0 * (double)r->reads / (double)r->acq : 0,
		       (unsigned long long)(r->acq - r->reads));
	if (cfg.mode == M_TRYLOCK)
		printf("  success       %.2f%% of %llu attempts, %llu EBUSY\n", r->success * 100,
		       (unsigned long long)r->attempts, (unsigned long long)r->failed);
	else if (cfg.mode != M_LOCK)
		printf("  success       %.2f%% of %llu attempts, %llu timeouts (patience %llu us)\n",
		       r->success * 100, (unsigned long long)r->attempts, (unsigned long long)r->failed,
		       (unsigned long long)cfg.patience_us);
	printf("  per thread    min %llu, max %llu, Jain fairness %.4f\n", (unsigned long long)r->min,
	       (unsigned long long)r->max, r->jain);
	printf("  handoff       %.4f of acquisitions by a thread other than the lock's previous holder\n",
	       r->handoff);
	if (cfg.clusters || cfg.ncpu_map)
		printf("  clusters      %s: %.4f of hand-offs inside a cluster, longest run %llu; remote "
		       "hand-off +%llu ns\n",
		       cfg.clusters_spec, r->local, (unsigned long long)r->longest,
		       (unsigned long long)cfg.remote_ns);
	if (cfg.clusters) {
		printf("  registered    main #0 tid %d cluster 0", (int)getpid());
		for (unsigned i = 0; i < cfg.threads; i++)
			printf(", #%u tid %d cluster %d", i + 1, (int)workers[i].ktid, workers[i].cluster);
		putchar('\n');
	}
	if (cfg.sample)
		printf("  latency       p50 %llu ns, p99 %llu ns, max %llu ns (%llu sampled, 1 in %u)\n",
		       (unsigned long long)r->p50, (unsigned long long)r->p99, (unsigned long long)r->lat_max,
		       (unsigned long long)r->lat_n, cfg.sample);
	if (r->npre)
		printf(
		    "  preemption    %u of %u threads, quantum %llu us every %llu us: %llu signals, %.1f ms "
		    "in handlers\n",
		    r->npre, cfg.threads, (unsigned long long)cfg.quantum_us,
		    (unsigned long long)cfg.period_us, (unsigned long long)r->signals, r->handler_ms);
	printf("  thread  acquisitions    failed  handler_ms  signals\n");
	for (unsigned i = 0; i < cfg.threads; i++) {
		struct worker *w = &workers[i];
		printf("  %6u  %12llu  %8llu  %10.1f  %7llu\n", i, (unsigned long long)w->acq,
		       (unsigned long long)w->failed,
		       (double)atomic_load_explicit(&w->handler_ns, memory_order_relaxed) / 1e6,
		       (unsigned long long)atomic_load_explicit(&w->signals, memory_order_relaxed));
	}
	printf("  mutual excl.  %s (counter %llu, %s %llu, overlaps seen %llu)\n",
	       r->counter == r->acq - r->reads && !r->violations ? "ok" : "VIOLATED",
	       (unsigned long long)r->counter, cfg.kind == K_RWLOCK ? "writes" : "acquisitions",
	       (unsigned long long)(r->acq - r->reads), (unsigned long long)r->violations);
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);

	if (sched_getaffinity(0, sizeof allowed_cpus, &allowed_cpus))
		die("sched_getaffinity", errno);
	allowed_count = CPU_COUNT(&allowed_cpus);
	quantum_ns = cfg.quantum_us * 1000;
	calibrate();

	/* Locks and the lines they protect. */
	if (posix_memalign((void **)&slots, 64, cfg.locks * sizeof *slots))
		die("posix_memalign", ENOMEM);
	memset(slots, 0, cfg.locks * sizeof *slots);
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	if (types[cfg.type].type >= 0)
		pthread_mutexattr_settype(&attr, types[cfg.type].type);
	pthread_rwlockattr_t rwattr;
	pthread_rwlockattr_init(&rwattr);
	if (cfg.rw_writer)
		pthread_rwlockattr_setkind_np(&rwattr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	for (unsigned i = 0; i < cfg.locks; i++) {
		const pthread_mutexattr_t *ap = types[cfg.type].type >= 0 ? &attr : NULL;
		int r = cfg.kind == K_RWLOCK ? pthread_rwlock_init(&slots[i].rw, &rwattr)
			: cfg.kind == K_SPIN ? pthread_spin_init(&slots[i].sp, PTHREAD_PROCESS_PRIVATE)
			: i == 0	     ? init_lock0(&slots[i].m, ap)
					     : init_lock(&slots[i].m, ap);
		if (r)
			die(cfg.kind == K_RWLOCK ? "pthread_rwlock_init"
			    : cfg.kind == K_SPIN ? "pthread_spin_init"
						 : "pthread_mutex_init",
			    r);
		atomic_init(&slots[i].last, -1);
		atomic_init(&slots[i].last_cluster, -1);
		if (cfg.cs_lines) {
			if (posix_memalign((void **)&slots[i].cs, 64, cfg.cs_lines * sizeof(struct line)))
				die("posix_memalign", ENOMEM);
			memset(slots[i].cs, 0, cfg.cs_lines * sizeof(struct line));
		}
	}
	pthread_mutexattr_destroy(&attr);
	pthread_rwlockattr_destroy(&rwattr);

	/* Workers. */
	if (posix_memalign((void **)&workers, 64, cfg.threads * sizeof *workers))
		die("posix_memalign", ENOMEM);
	memset(workers, 0, cfg.threads * sizeof *workers);
	unsigned npre = (unsigned)floor(cfg.preempt * cfg.threads + 0.5);
	for (unsigned i = 0; i < cfg.threads; i++) {
		struct worker *w = &workers[i];
		w->id = i;
		w->rng = (cfg.seed + 1) * 0x9E3779B97F4A7C15ull ^ (i + 1) * 0xBF58476D1CE4E5B9ull;
		if (!w->rng)
			w->rng = 1;
		w->preempted = i < npre;
		if (cfg.sample && !(w->lat = malloc(RESERVOIR * sizeof *w->lat)))
			die("malloc", ENOMEM);
	}
	if (npre) {
		struct sigaction sa = {0};
		sa.sa_handler = on_tick;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGRTMIN, &sa, NULL))
			die("sigaction", errno);
	}

	/* External load, started before the lock threads, stopped after. */
	pthread_t *load_threads = calloc(cfg.load ? cfg.load : 1, sizeof *load_threads);
	pid_t *load_pids = calloc(cfg.load ? cfg.load : 1, sizeof *load_pids);
	if (!load_threads || !load_pids)
		die("calloc", ENOMEM);
	for (unsigned i = 0; i < cfg.load; i++) {
		if (cfg.load_procs) {
			pid_t parent = getpid(), pid = fork();
			if (pid < 0)
				die("fork", errno);
			if (pid == 0) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				if (getppid() != parent)
					_exit(0);
				if (cfg.pin) {
					pthread_attr_t a;
					pthread_attr_init(&a);
					pin_attr(&a, cfg.threads + i);
					cpu_set_t one;
					if (!pthread_attr_getaffinity_np(&a, sizeof one, &one))
						sched_setaffinity(0, sizeof one, &one);
				}
				for (uint64_t x = i;;)
					x = work(1000000, x);
			}
			load_pids[i] = pid;
		} else {
			pthread_attr_t a;
			pthread_attr_init(&a);
			pin_attr(&a, cfg.threads + i);
			int r = pthread_create(&load_threads[i], &a, load_main, (void *)(uintptr_t)i);
			if (r)
				die("pthread_create", r);
			pthread_attr_destroy(&a);
		}
	}

	int r = pthread_barrier_init(&start_barrier, NULL, cfg.threads + 1);
	if (r)
		die("pthread_barrier_init", r);
	if (cfg.clusters)
		register_thread(NULL); /* the main thread: #0 */
	for (unsigned i = 0; i < cfg.threads; i++) {
		pthread_attr_t a;
		pthread_attr_init(&a);
		pin_attr(&a, i);
		workers[i].cluster = (int)((i + 1) % (cfg.clusters ? cfg.clusters : 1));
		r = pthread_create(&workers[i].tid, &a, worker_main, &workers[i]);
		if (r)
			die("pthread_create", r);
		pthread_attr_destroy(&a);
		/* thread:N: the next worker starts once this one has registered */
		while (cfg.clusters && !atomic_load_explicit(&registered, memory_order_acquire))
			sched_yield();
		atomic_store_explicit(&registered, 0, memory_order_relaxed);
	}
	pthread_barrier_wait(&start_barrier);
	uint64_t t_start = now_ns(), t_end;
	if (!cfg.iterations) {
		uint64_t d = (uint64_t)(cfg.duration * 1e9);
		struct timespec ts = {(time_t)(d / 1000000000), (long)(d % 1000000000)};
		while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
			;
		t_end = now_ns();
		atomic_store_explicit(&stop_flag, 1, memory_order_relaxed);
		for (unsigned i = 0; i < cfg.threads; i++)
			pthread_join(workers[i].tid, NULL);
	} else {
		for (unsigned i = 0; i < cfg.threads; i++)
			pthread_join(workers[i].tid, NULL);
		t_end = now_ns();
	}
	atomic_store_explicit(&load_stop, 1, memory_order_relaxed);
	for (unsigned i = 0; i < cfg.load; i++) {
		if (cfg.load_procs) {
			kill(load_pids[i], SIGKILL);
			waitpid(load_pids[i], NULL, 0);
		} else {
			pthread_join(load_threads[i], NULL);
		}
	}

	/* Totals. */
	uint64_t acq = 0, attempts = 0, failed = 0, handoffs = 0, mn = UINT64_MAX, mx = 0, signals = 0,
		 cl_handoffs = 0, local = 0, longest = 0, reads = 0;
	double sum = 0, sumsq = 0, handler_ms = 0;
	for (unsigned i = 0; i < cfg.threads; i++) {
		struct worker *w = &workers[i];
		acq += w->acq;
		reads += w->reads;
		attempts += w->attempts;
		failed += w->failed;
		handoffs += w->handoffs;
		local += w->local_handoffs;
		cl_handoffs += w->cl_handoffs;
		longest = w->longest_run > longest ? w->longest_run : longest;
		mn = w->acq < mn ? w->acq : mn;
		mx = w->acq > mx ? w->acq : mx;
		sum += (double)w->acq;
		sumsq += (double)w->acq * (double)w->acq;
		signals += atomic_load_explicit(&w->signals, memory_order_relaxed);
		handler_ms += (double)atomic_load_explicit(&w->handler_ns, memory_order_relaxed) / 1e6;
	}
	uint64_t counter = 0;
	for (unsigned i = 0; i < cfg.locks; i++)
		counter += atomic_load_explicit(&slots[i].counter, memory_order_relaxed);
	uint64_t viol = atomic_load_explicit(&violations, memory_order_relaxed);
	struct report rp = {
	    .secs = (double)(t_end - t_start) / 1e9,
	    .acq = acq,
	    .attempts = attempts,
	    .failed = failed,
	    .min = mn,
	    .max = mx,
	    .jain = sumsq > 0 ? sum * sum / ((double)cfg.threads * sumsq) : 0,
	    .success = attempts ? (double)acq / (double)attempts : 0,
	    .handoff = acq ? (double)handoffs / (double)acq : 0,
	    .local = cl_handoffs ? (double)local / (double)cl_handoffs : 0,
	    .longest = longest,
	    .npre = npre,
	    .signals = signals,
	    .handler_ms = handler_ms,
	    .counter = counter,
	    .violations = viol,
	    .reads = reads,
	};
	rp.rate = rp.secs > 0 ? (double)acq / rp.secs : 0;
	rp.ns_per_acq = acq ? rp.secs * 1e9 / (double)acq : 0;
	percentiles(&rp.p50, &rp.p99, &rp.lat_max, &rp.lat_n);
	algo_name(rp.algo, sizeof rp.algo, rp.wait, sizeof rp.wait);
	if (cfg.csv)
		print_csv(&rp);
	else
		print_summary(&rp);
	fflush(stdout);
	if (counter != acq - reads || viol) {
		fprintf(stderr,
			"lockbench: mutual exclusion violated: protected counters sum to %llu but threads "
			"counted %llu %s, %llu overlapping critical sections seen\n",
			(unsigned long long)counter, (unsigned long long)(acq - reads),
			cfg.kind == K_RWLOCK ? "writes" : "acquisitions", (unsigned long long)viol);
		return 3;
	}
	return 0;
}
