/*
 * registry.c - unit tests of the algorithm registry, of every algorithm's
 * ops table against the contract of lock.h, and of ls_param_parse.
 *
 *   registry CASE      CASE: tables, zero-state, copied-state, params,
 *                      param-parse, caps-string, names; "all" runs every one
 *
 * Prints one line per failed check ("registry: FAIL case: what") and exits
 * 1 if any failed, else prints "registry: OK case" and exits 0.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock.h"
#include "pool.h"
#include "wait.h"

#define OPT_PROG "registry"
#include "opts.h"

static const char *cur;
static int failures;

#define CHECK(cond, ...)                                                                                     \
	do {                                                                                                 \
		if (!(cond)) {                                                                               \
			failures++;                                                                          \
			fprintf(stderr, "registry: FAIL %s: ", cur);                                         \
			fprintf(stderr, __VA_ARGS__);                                                        \
			fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__);                                   \
		}                                                                                            \
	} while (0)

static bool is_lock(const struct ls_algo *a)
{
	return !(a->caps & LS_CAP_PASSTHROUGH);
}

/* Every table: a name, a description, ops matching the capabilities. */
static void tables(void)
{
	size_t n = ls_algo_count();
	CHECK(n >= 8, "only %zu algorithms registered", n);
	CHECK(ls_algo_at(n) == NULL, "ls_algo_at(count) is not NULL");
	for (size_t i = 0; i < n; i++) {
		const struct ls_algo *a = ls_algo_at(i);
		CHECK(a && a->name && a->name[0], "algorithm %zu has no name", i);
		if (!a || !a->name)
			continue;
		CHECK(a->desc && a->desc[0], "%s: no description", a->name);
		CHECK(ls_algo_find(a->name) == a, "%s: ls_algo_find does not return its table", a->name);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(ls_algo_at(j)->name, a->name), "%s: registered twice", a->name);
		if (i > 0) {
			const struct ls_algo *p = ls_algo_at(i - 1);
			CHECK(p->rank < a->rank || (p->rank == a->rank && strcmp(p->name, a->name) < 0),
			      "%s listed after %s: not sorted by rank, then name", a->name, p->name);
		}
		for (const char *c = a->name; *c; c++)
			CHECK((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-',
			      "%s: name is not lower-case letters, digits and '-'", a->name);
		if (!is_lock(a))
			continue;
		CHECK(a->lock && a->trylock && a->unlock, "%s: lock, trylock and unlock are required",
		      a->name);
		CHECK(!(a->caps & LS_CAP_TIMEOUT) == !a->timedlock,
		      "%s: LS_CAP_TIMEOUT and a timedlock go together (lock.h)", a->name);
		CHECK(a->state_size > 0, "%s: state_size is 0", a->name);
		if (a->state_size > LS_INLINE_STATE) {
			/* out of line: the shim's 64-byte header, then the state */
			void *p = ls_ext_alloc(a->state_size + LS_CACHELINE);
			CHECK(p != NULL, "%s: state of %zu bytes does not fit an ls_ext block", a->name,
			      a->state_size);
			if (p)
				ls_ext_free(p, a->state_size + LS_CACHELINE);
		}
	}
	CHECK(ls_algo_find("pthread") && (ls_algo_find("pthread")->caps & LS_CAP_PASSTHROUGH),
	      "pthread is missing or not passthrough");
	static const char *const classic[] = {"tas", "ttas", "backoff", "ticket", "alock", "clh", "mcs"};
	for (size_t i = 0; i < sizeof classic / sizeof classic[0]; i++)
		CHECK(ls_algo_find(classic[i]) != NULL, "%s is not registered", classic[i]);
	CHECK(ls_algo_find("MCS") == NULL, "names are case-sensitive: MCS found");
	CHECK(ls_algo_find("") == NULL, "the empty name found");
	CHECK(ls_algo_find("mc") == NULL, "a prefix found");
}

static void *state_new(const struct ls_algo *a)
{
	void *p = opt_state(a);
	if (!p)
		opt_error("cannot allocate a state");
	return p;
}

/* All-zero is unlocked, without init (static initialisers): trylock takes
 * it, a second trylock is EBUSY, an expired timedlock is ETIMEDOUT, unlock
 * frees it; lock/unlock cycles leave it unlocked. Each algorithm runs in a
 * thread of its own: once the lock is released and destroyed and that
 * thread has exited, no node may be in use (a thread may keep nodes for
 * itself while it lives; the abortable locks' per-thread pools do). */
static void *zero_state_one(void *arg)
{
	const struct ls_algo *a = arg;
	void *s = state_new(a);
	CHECK(a->trylock(s) == 0, "%s: trylock of an all-zero state failed", a->name);
	CHECK(a->trylock(s) == EBUSY, "%s: trylock of a held lock is not EBUSY", a->name);
	if (a->timedlock)
		CHECK(a->timedlock(s, ls_now_ns()) == ETIMEDOUT,
		      "%s: timedlock of a held lock, deadline now, is not ETIMEDOUT", a->name);
	CHECK(ls_timedlock_fallback(a, s, ls_now_ns()) == ETIMEDOUT,
	      "%s: fallback timedlock of a held lock is not ETIMEDOUT", a->name);
	a->unlock(s);
	for (int k = 0; k < 100; k++) {
		a->lock(s);
		a->unlock(s);
	}
	CHECK(a->trylock(s) == 0, "%s: not unlocked after 100 lock/unlock", a->name);
	a->unlock(s);
	if (a->timedlock) {
		CHECK(a->timedlock(s, ls_now_ns() - 1) == 0,
		      "%s: timedlock of a free lock with a past deadline must succeed", a->name);
		a->unlock(s);
	}
	CHECK(ls_timedlock_fallback(a, s, 1) == 0, "%s: fallback timedlock of a free lock failed", a->name);
	a->unlock(s);
	if (a->destroy)
		a->destroy(s);
	opt_state_free(a, s);
	return NULL;
}

static void zero_state(void)
{
	for (size_t i = 0; i < ls_algo_count(); i++) {
		const struct ls_algo *a = ls_algo_at(i);
		if (!is_lock(a))
			continue;
		struct ls_node_stats ns;
		ls_node_stats(&ns);
		long before = ns.in_use;
		pthread_t t;
		if (pthread_create(&t, NULL, zero_state_one, (void *)a)) {
			fprintf(stderr, "registry: pthread_create failed\n");
			exit(2);
		}
		pthread_join(t, NULL);
		ls_node_stats(&ns);
		CHECK(ns.in_use == before,
		      "%s: %ld node(s) still in use after the lock was released and destroyed and its "
		      "thread exited",
		      a->name, ns.in_use - before);
	}
}

/* A state copied byte for byte while unlocked is an unlocked lock of its
 * own (programs copy unlocked mutexes); only for inline states, which is
 * where copies happen (the shim re-attaches out-of-line ones). */
static void copied_state(void)
{
	for (size_t i = 0; i < ls_algo_count(); i++) {
		const struct ls_algo *a = ls_algo_at(i);
		if (!is_lock(a) || a->state_size > LS_INLINE_STATE)
			continue;
		void *s = state_new(a), *c = state_new(a);
		if (a->init)
			a->init(s);
		for (int k = 0; k < 3; k++) {
			a->lock(s);
			a->unlock(s);
		}
		memcpy(c, s, a->state_size);
		a->lock(s); /* the original held: the copy must not be */
		CHECK(a->trylock(c) == 0, "%s: a copy of an unlocked state is not free", a->name);
		CHECK(a->trylock(c) == EBUSY, "%s: the copy does not lock", a->name);
		a->unlock(c);
		a->unlock(s);
		CHECK(a->trylock(s) == 0 && a->trylock(c) == 0, "%s: original and copy not both free",
		      a->name);
		a->unlock(s);
		a->unlock(c);
		opt_state_free(a, s);
		opt_state_free(a, c);
	}
}

/* Every tunable: a LOCKSWAP_ name, a description, a default in range. */
static void params(void)
{
	for (size_t i = 0; i < ls_algo_count(); i++) {
		const struct ls_algo *a = ls_algo_at(i);
		for (const struct ls_param *p = a->params; p && p->env; p++) {
			CHECK(!strncmp(p->env, "LOCKSWAP_", 9), "%s: tunable %s is not LOCKSWAP_*", a->name,
			      p->env);
			CHECK(p->desc && p->desc[0], "%s: %s has no description", a->name, p->env);
			CHECK(p->value && p->min <= *p->value && *p->value <= p->max,
			      "%s: %s default outside %llu..%llu", a->name, p->env,
			      (unsigned long long)p->min, (unsigned long long)p->max);
		}
	}
}

static void param_parse(void)
{
	static uint64_t v;
	const struct ls_param p = {"LOCKSWAP_TEST", "test", &v, 2, 100};
	static const struct {
		const char *text;
		int ok;
		uint64_t want;
	} cases[] = {
	    {"2", 1, 2},  {"100", 1, 100}, {"0x10", 1, 16}, {"010", 1, 10},
	    {"1", 0, 0},  {"101", 0, 0},   {"", 0, 0},	    {"-1", 0, 0},
	    {"+5", 0, 0}, {" 5", 0, 0},	   {"5 ", 0, 0},    {"\t5", 0, 0},
	    {"5k", 0, 0}, {"abc", 0, 0},   {"0x", 0, 0},    {"18446744073709551616", 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char err[256] = "";
		uint64_t out = 12345;
		int r = ls_param_parse(&p, cases[i].text, &out, err, sizeof err);
		if (cases[i].ok) {
			CHECK(r == 0 && out == cases[i].want,
			      "'%s' should parse as %llu (got r=%d, %llu: %s)", cases[i].text,
			      (unsigned long long)cases[i].want, r, (unsigned long long)out, err);
		} else {
			CHECK(r == -1, "'%s' should be rejected", cases[i].text);
			CHECK(out == 12345, "'%s': rejected but the output was written", cases[i].text);
			CHECK(strstr(err, "LOCKSWAP_TEST") && strstr(err, "2..100") && !strchr(err, '\n'),
			      "'%s': the message must name the variable and the range, on one line: %s",
			      cases[i].text, err);
		}
	}
}

static void caps_string(void)
{
	char b[128];
	CHECK(!strcmp(ls_caps_string(0, b, sizeof b), "-"), "no capability: '%s'", b);
	CHECK(!strcmp(ls_caps_string(LS_CAP_FIFO | LS_CAP_QNODE, b, sizeof b), "fifo,qnode"),
	      "fifo|qnode: '%s'", b);
	CHECK(!strcmp(ls_caps_string(LS_CAP_TIMEOUT, b, sizeof b), "timeout"), "timeout: '%s'", b);
	CHECK(!strcmp(ls_caps_string(LS_CAP_HIER | LS_CAP_FIFO, b, sizeof b), "fifo,hier"), "hier|fifo: '%s'",
	      b);
}

static void names(void)
{
	char b[4096], want[4096] = "";
	for (size_t i = 0; i < ls_algo_count(); i++)
		snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? ", " : "",
			 ls_algo_at(i)->name);
	CHECK(!strcmp(ls_algo_names(b, sizeof b), want), "names '%s', expected '%s'", b, want);
	char small[12];
	memset(small, 'x', sizeof small);
	ls_algo_names(small, 8);
	CHECK(memchr(small, 0, 8) != NULL, "a short buffer is not terminated");
	CHECK(small[8] == 'x', "a short buffer was overrun");
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
    {"tables", tables}, {"zero-state", zero_state},   {"copied-state", copied_state},
    {"params", params}, {"param-parse", param_parse}, {"caps-string", caps_string},
    {"names", names},
};

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: registry CASE|all\n");
		return 2;
	}
	ls_node_counting = true;
	ls_wait_cfg.policy = LS_WAIT_YIELD; /* the fallback never naps */
	int ran = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (strcmp(argv[1], "all") && strcmp(argv[1], cases[i].name))
			continue;
		cur = cases[i].name;
		int before = failures;
		cases[i].fn();
		ran++;
		if (failures == before)
			printf("registry: OK %s\n", cur);
	}
	if (!ran) {
		fprintf(stderr, "registry: unknown case '%s'\n", argv[1]);
		return 2;
	}
	return failures ? 1 : 0;
}
