/*
 * fork.c - the fork generation (fork.h): lockswap's pthread_atfork
 * handlers, and the table of addresses that ls_fork_first answers from.
 *
 *	ls_fork_word	generation | LS_FORK_PENDING while a fork is under way
 *	ls_fork_odd	generation * 2 + 1
 *	prepare_pid	the forking process, for ls_fork_resolve
 *	next_gen	the generation its child will have
 *
 * prepare: next_gen, prepare_pid, then PENDING (release: a slow path that
 * sees PENDING sees the other two); parent: PENDING cleared once no fork is
 * under way; child: the word becomes next_gen, which ls_fork_resolve may
 * have done already (a library's child handler that ran before ours and
 * took a slow path): the same store twice.
 *
 * Hooks (ls_fork_at_child) run once per child, from whichever of our
 * handler and ls_fork_resolve comes first.
 *
 * The table (ls_fork_first, and the locks of ls_fork_repair):
 * FIRST_SLOTS entries of (address, generation), by a hash of the address,
 * each under a lock word that names the generation of its locker: a word
 * locked by an older generation was locked by a thread that fork left
 * behind, and is taken over. Slow paths of fork children only.
 */
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "fork.h"
#include "wait.h"

_Atomic uint32_t ls_fork_word;
_Atomic uint32_t ls_fork_odd = 1;
static pid_t prepare_pid;
static uint32_t next_gen;
static _Atomic int inflight;

static void fork_prepare(void)
{
	uint32_t g = (ls_fork_stamp() & LS_FORK_GEN_MASK) + 1;
	next_gen = (g & LS_FORK_GEN_MASK) ? g : 1; /* 0 is "not a fork child" */
	prepare_pid = getpid();
	atomic_fetch_add_explicit(&inflight, 1, memory_order_relaxed);
	/* release: pairs with the acquire in ls_fork_resolve */
	atomic_fetch_or_explicit(&ls_fork_word, LS_FORK_PENDING, memory_order_release);
}

static void fork_parent(void)
{
	/* relaxed: PENDING only makes a slow path ask getpid() */
	if (atomic_fetch_sub_explicit(&inflight, 1, memory_order_relaxed) == 1)
		atomic_fetch_and_explicit(&ls_fork_word, ~LS_FORK_PENDING, memory_order_relaxed);
}

#define MAX_HOOKS 8
static void (*hooks[MAX_HOOKS])(void);
static _Atomic unsigned nhooks;
static uint32_t hooks_gen; /* the generation whose hooks have run */

void ls_fork_at_child(void (*fn)(void))
{
	unsigned i = atomic_fetch_add_explicit(&nhooks, 1, memory_order_relaxed);
	if (i < MAX_HOOKS)
		hooks[i] = fn;
}

static void fork_child(void)
{
	atomic_store_explicit(&inflight, 0, memory_order_relaxed);
	/* relaxed: the child's threads are created after this, or resolve it */
	atomic_store_explicit(&ls_fork_odd, next_gen << 1 | 1, memory_order_relaxed);
	atomic_store_explicit(&ls_fork_word, next_gen, memory_order_relaxed);
	if (hooks_gen == next_gen)
		return; /* ls_fork_resolve ran them */
	hooks_gen = next_gen;
	unsigned n = atomic_load_explicit(&nhooks, memory_order_relaxed);
	for (unsigned i = 0; i < n && i < MAX_HOOKS; i++)
		hooks[i]();
}

uint32_t ls_fork_resolve(void)
{
	/* acquire: pairs with the release in fork_prepare */
	uint32_t g = atomic_load_explicit(&ls_fork_word, memory_order_acquire);
	if (!(g & LS_FORK_PENDING))
		return g;
	if (getpid() == prepare_pid)
		return g & LS_FORK_GEN_MASK; /* the parent, while it forks */
	fork_child();			     /* the child, before our handler ran */
	return next_gen;
}

__attribute__((constructor(101))) static void fork_register(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* ---- ls_fork_first ---- */

#define FIRST_SLOTS 256
struct first_slot {
	_Atomic uint64_t lock; /* locker's generation << 1 | 1 while locked */
	const void *addr;
	uint32_t gen;
};
static struct first_slot first_slots[FIRST_SLOTS];

static struct first_slot *slot_lock(const void *addr, uint32_t g)
{
	uint64_t h = (uint64_t)(uintptr_t)addr * 0x9e3779b97f4a7c15ull;
	struct first_slot *s = &first_slots[h >> 56];
	uint64_t mine = (uint64_t)g << 1 | 1;
	for (;;) {
		/* relaxed: the CAS below decides and orders */
		uint64_t v = atomic_load_explicit(&s->lock, memory_order_relaxed);
		if (v == mine) { /* a live thread of this process holds it */
			sched_yield();
			continue;
		}
		/* acquire: pairs with the release store in slot_unlock */
		if (atomic_compare_exchange_weak_explicit(&s->lock, &v, mine, memory_order_acquire,
							  memory_order_relaxed))
			return s;
	}
}

static void slot_unlock(struct first_slot *s, uint32_t g)
{
	/* release: the entry, and a repair made under it, are seen by the next locker */
	atomic_store_explicit(&s->lock, (uint64_t)g << 1, memory_order_release);
}

bool ls_fork_first(const void *addr)
{
	uint32_t g = ls_fork_gen();
	if (!g)
		return false;
	struct first_slot *s = slot_lock(addr, g);
	bool first = s->addr != addr || s->gen != g;
	if (first) {
		s->addr = addr;
		s->gen = g;
	}
	slot_unlock(s, g);
	return first;
}

void ls_fork_repair(const void *addr, _Atomic uint32_t *gen, void (*repair)(void *arg), void *arg)
{
	uint32_t g = ls_fork_gen();
	/* acquire: pairs with the release of slot_unlock after the repair */
	if (!g || atomic_load_explicit(gen, memory_order_acquire) == g)
		return;
	struct first_slot *s = slot_lock(addr, g);
	/* relaxed: under the slot's lock, which every repair of addr takes */
	if (atomic_load_explicit(gen, memory_order_relaxed) != g) {
		repair(arg);
		atomic_store_explicit(gen, g, memory_order_relaxed);
	}
	slot_unlock(s, g);
}
