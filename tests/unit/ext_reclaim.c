/*
 * ext_reclaim.c - the pool reclaims the out-of-line block of a lock that is
 * gone, and only then (locks/common/pool.h, "Reclaiming"; issue 30).
 *
 *   ext_reclaim
 * gone|raced|restored|destroy|nested|churn|idle|reused|idle-raced|attach-raced|stale|pinned|overflow|refused|all
 *
 * A "lock" here is a word (ls_ext_word_t) in memory the test owns, with a
 * reclaimable block attached as the shim and locks/hier attach theirs.
 *   gone      blocks whose word was zeroed (a new lock at the address),
 *             overwritten (the memory reused), whose page was unmapped, or
 *             re-pointed at another lock's block (a copy over it) are
 *             reclaimed by one look; blocks whose word still holds them, or
 *             whose page is mapped but unreadable (PROT_NONE), are not; a
 *             copy of a reclaimed lock never takes its block for its own.
 *   raced     the look is stopped after it read the words, before its
 *             claim (the first LS_POINT_POOL_CLAIMING): the program puts
 *             the block back in the word (a saved copy of the unlocked
 *             lock copied back) and the lock's next use takes it, before
 *             the claim: the look, let go, must see the block back (its
 *             barrier and second read) and keep it.
 *   restored  the look is stopped right after its claim (the second
 *             LS_POINT_POOL_CLAIMING); the program puts the block back in
 *             the word (a saved copy of the unlocked lock copied back): the
 *             lock's next attach finds the claimed block and keeps it (its
 *             fresh block goes back), and the look, let go, frees nothing.
 *   destroy   the same, and a destroy (ls_ext_take) of the restored lock
 *             runs while the look is stopped: exactly one of them frees the
 *             block (whichever takes its mark first).
 *   nested    a block whose state holds another lock's word (as a composed
 *             rwlock's state holds c-rw-wp's lines): the look frees the
 *             outer block, and its reclaim function the inner one.
 *   churn     threads make locks in malloc'd memory, attach a block, tag
 *             it, check the tag through ls_ext_load, then free the memory
 *             without destroy (or destroy first, or copy the lock away and
 *             back), while another thread looks again and again: a block is
 *             never reclaimed while its lock can reach it (its tag stays
 *             the lock's).
 *   idle      blocks marked idle (pool.h, "Idle locks") whose words still
 *             hold them: one used since the last look survives that look
 *             and goes at the next; one a thread holds (entered, not left)
 *             never goes; one not marked idle never goes; a lock whose
 *             block went gets a fresh one at its next use.
 *   reused    idle blocks of a working set larger than the shortest
 *             interval between looks, used in turn round after round (a
 *             table of locks swept by a program): after a few rounds the
 *             locks keep their blocks (the looks' window grew), where
 *             before every use attached a fresh one, for ever; then locks
 *             used once and never again still lose theirs (the window
 *             shrinks back), so memory does not follow them.
 *   idle-raced  the look is stopped right after claiming an idle block;
 *             the lock is then used (entered): the use undoes the claim,
 *             and the look, let go, keeps the block (its holds say so).
 *   attach-raced  an attach (a lock's slow path) has read the word and
 *             holds the lock's idle block, and is stopped before it decides
 *             whether that block is the lock's own; a look claims the block
 *             and is stopped after its claim; the attach, let go, keeps the
 *             block (undoing the claim), and the look, let go, leaves it:
 *             one block of the lock's, in its word (taking the claimed
 *             block for another's, the attach put a fresh one in the word
 *             and the look gave the first back to the lock: two blocks of
 *             one lock, a c-rw-wp reader counted in one and leaving from
 *             the other, a writer waiting for ever).
 *   stale     a lock whose idle block went (its word still names it),
 *             the block at the head of the free list: a block for that
 *             lock (ls_ext_alloc_for) is another one, so that attaching it
 *             never puts the same pointer back in the word (an attach
 *             that had read the word before could then replace the block
 *             its holders use); the lock's next use gets a block of its
 *             own.
 *   pinned    a thread that exits holding a block pins it: it never goes
 *             while its word holds it (a lock held by a thread that is
 *             gone stays held, as glibc's).
 *   overflow  (it turns idle freeing off for the process: after the
 *             others) a thread that holds more blocks than its record has
 *             room for: from then on no idle block goes.
 *   refused   (after overflow) threads that find no memory for a record of
 *             their holds still enter and leave blocks, and do not ask for
 *             a record again, even once memory is back: each ask took the
 *             pool's region lock and a failing mmap, on every lock they
 *             entered, while nothing was left.
 * Exit 0 pass ("ext_reclaim: OK CASE"), 1 fail (one line), 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FAIL_PREFIX "ext_reclaim: FAIL "
#include "fail.h"
#include "nomem.h"
#include "lock.h"
#include "pool.h"

#define SIZE 128 /* two lines: a head and a payload */

struct blk {
	struct ls_ext_head h;
	_Atomic uintptr_t tag; /* the lock's own mark (churn) */
	ls_ext_word_t inner;   /* nested: another lock's word */
};

static _Atomic int reclaimed_inner;

static void reclaim_blk(struct ls_ext_head *h)
{
	struct blk *b = (struct blk *)h;
	struct ls_ext_head *in = ls_ext_take(&b->inner, NULL);
	if (in) {
		ls_ext_free(in, SIZE);
		atomic_fetch_add(&reclaimed_inner, 1);
	}
}

/* Attaches a fresh block to w (or adopts the one there) and returns it. */
static struct blk *attach(ls_ext_word_t *w)
{
	struct blk *b = ls_ext_alloc_for(w, SIZE, true);
	b->h.reclaim = ls_ext_reclaim_id(reclaim_blk);
	return (struct blk *)ls_ext_attach(w, &b->h, SIZE, NULL);
}

/* As a lock path: the block of w's own, attached if need be. */
static struct blk *state(ls_ext_word_t *w)
{
	struct blk *b = (struct blk *)ls_ext_load(w);
	return b ? b : attach(w);
}

static bool is_free(const struct blk *b)
{
	/* a block on the free list starts with the pool's link, odd */
	return __atomic_load_n((const uintptr_t *)b, __ATOMIC_RELAXED) & 1;
}

static char *map_page(void)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fail("mmap: %s", strerror(errno));
	return p;
}

/* ---- a look stopped at its claim ---- */

static __thread int stop_at; /* the looker: 1 before its claim, 2 after */
static int stop_where;
static _Atomic int claimed, go;
static _Atomic unsigned look_result;

static __thread int attach_stop; /* an attacher: stop once, having read the word */
static _Atomic int attaching, attach_go;

void ls_test_point(enum ls_test_point id)
{
	if (id == LS_POINT_ATTACHING && attach_stop) {
		attach_stop = 0;
		atomic_store(&attaching, 1);
		while (!atomic_load(&attach_go))
			usleep(100);
	}
	if (id == LS_POINT_POOL_CLAIMING && stop_at && --stop_at == 0) {
		atomic_store(&claimed, 1);
		while (!atomic_load(&go))
			usleep(100);
	}
}

static void *looker(void *arg)
{
	(void)arg;
	stop_at = stop_where;
	atomic_store(&look_result, ls_ext_scan());
	return NULL;
}

/* A look in another thread, stopped before (where 1) or after (2) its
 * claim. */
static pthread_t start_look(int where)
{
	pthread_t t;
	stop_where = where;
	atomic_store(&claimed, 0);
	atomic_store(&go, 0);
	if (pthread_create(&t, NULL, looker, NULL))
		fail("pthread_create");
	while (!atomic_load(&claimed))
		usleep(100);
	return t;
}

static unsigned end_look(pthread_t t)
{
	atomic_store(&go, 1);
	pthread_join(t, NULL);
	return atomic_load(&look_result);
}

/* ---- cases ---- */

static void gone(void)
{
	ls_ext_scan(); /* nothing of earlier cases */
	char *pg = map_page(), *unmapped = map_page(), *none = map_page();
	ls_ext_word_t *w = (ls_ext_word_t *)pg;
	struct blk *b[8];
	for (int i = 0; i < 6; i++)
		b[i] = attach(&w[i]);
	b[6] = attach((ls_ext_word_t *)unmapped);
	b[7] = attach((ls_ext_word_t *)none);
	ls_ext_word_t copy;
	memcpy(&copy, &w[1], sizeof copy); /* a copy of lock 1, unlocked */
	atomic_store(&w[1], NULL);	   /* a new lock at its address */
	memset(&w[2], 0x5a, sizeof w[2]);  /* the memory reused */
	memcpy(&w[3], &w[0], sizeof w[3]); /* lock 0 copied over lock 3 */
	munmap(unmapped, 4096);
	mprotect(none, 4096, PROT_NONE);
	unsigned n = ls_ext_scan();
	if (n != 4)
		fail("gone: one look reclaimed %u blocks, not the 4 of the locks that are gone", n);
	for (int i = 0; i < 8; i++) {
		bool gone_i = i == 1 || i == 2 || i == 3 || i == 6;
		if (is_free(b[i]) != gone_i)
			fail("gone: lock %d's block is %s", i,
			     gone_i ? "still out" : "freed while its lock holds it");
	}
	mprotect(none, 4096, PROT_READ | PROT_WRITE);
	if (ls_ext_load((ls_ext_word_t *)none) != &b[7]->h || ls_ext_load(&w[0]) != &b[0]->h)
		fail("gone: a lock that was kept does not find its block");
	if (ls_ext_load(&copy))
		fail("gone: a copy of a reclaimed lock took its freed block for its own");
	struct blk *c = state(&copy);
	if (__atomic_load_n(&c->h.owner, __ATOMIC_RELAXED) != (const void *)&copy)
		fail("gone: the copy's own block names another owner");
	/* destroy of what is left: each frees its own block, once */
	for (int i = 0; i < 8; i++) {
		ls_ext_word_t *wi = i == 6 ? NULL : i == 7 ? (ls_ext_word_t *)none : &w[i];
		struct ls_ext_head *own = wi ? ls_ext_take(wi, NULL) : NULL;
		bool expect = i == 0 || i == 4 || i == 5 || i == 7;
		if ((own != NULL) != expect)
			fail("gone: destroy of lock %d %s", i,
			     expect ? "did not get its block" : "got a block");
		if (own)
			ls_ext_free(own, SIZE);
	}
	struct ls_ext_head *own = ls_ext_take(&copy, NULL);
	if (own != &c->h)
		fail("gone: destroy of the copy did not get its own block");
	ls_ext_free(own, SIZE);
	munmap(pg, 4096);
	munmap(none, 4096);
}

static void raced(void)
{
	ls_ext_scan();
	char *pg = map_page();
	ls_ext_word_t *w = (ls_ext_word_t *)pg;
	struct blk *b = attach(w);
	ls_ext_word_t saved;
	memcpy(&saved, w, sizeof saved);
	atomic_store(w, NULL);
	pthread_t t = start_look(1);	 /* the look has read NULL in the word */
	memcpy(w, &saved, sizeof saved); /* the saved lock is copied back */
	if (state(w) != b)		 /* and used */
		fail("raced: the restored lock does not find its block");
	atomic_store(&b->tag, 1);
	unsigned n = end_look(t);
	if (n || is_free(b) || ls_ext_load(w) != &b->h || atomic_load(&b->tag) != 1)
		fail("raced: the look freed the block of a lock in use (reclaimed %u)", n);
	struct ls_ext_head *own = ls_ext_take(w, NULL);
	if (own != &b->h)
		fail("raced: destroy did not get the block");
	ls_ext_free(own, SIZE);
	munmap(pg, 4096);
}

static void restored(void)
{
	ls_ext_scan();
	char *pg = map_page();
	ls_ext_word_t *w = (ls_ext_word_t *)pg;
	struct blk *b = attach(w);
	ls_ext_word_t saved;
	memcpy(&saved, w, sizeof saved); /* the program saves the unlocked lock */
	atomic_store(w, NULL);		 /* and puts something else there */
	pthread_t t = start_look(2);	 /* the look claims the block */
	memcpy(w, &saved, sizeof saved); /* the saved lock is copied back */
	if (ls_ext_load(w))
		fail("restored: a claimed block was taken for its lock's own without the claim undone");
	struct blk *got = state(w);
	if (got != b)
		fail("restored: the lock's attach replaced its own claimed block (%p) with %p", (void *)b,
		     (void *)got);
	unsigned n = end_look(t);
	if (n || is_free(b) || ls_ext_load(w) != &b->h)
		fail("restored: the look freed the block of the restored lock (reclaimed %u)", n);
	struct ls_ext_head *own = ls_ext_take(w, NULL);
	if (own != &b->h)
		fail("restored: destroy did not get the block");
	ls_ext_free(own, SIZE);
	munmap(pg, 4096);
}

static struct ls_ext_head *taken;
static void *destroyer(void *arg)
{
	taken = ls_ext_take(arg, NULL);
	return NULL;
}

static void destroy(void)
{
	ls_ext_scan();
	char *pg = map_page();
	ls_ext_word_t *w = (ls_ext_word_t *)pg;
	struct blk *b = attach(w);
	ls_ext_word_t saved;
	memcpy(&saved, w, sizeof saved);
	atomic_store(w, NULL);
	pthread_t t = start_look(2);
	memcpy(w, &saved, sizeof saved);
	pthread_t d;
	if (pthread_create(&d, NULL, destroyer, w))
		fail("pthread_create");
	while (atomic_load(w)) /* the destroy has emptied the word */
		usleep(100);
	unsigned n = end_look(t);
	pthread_join(d, NULL);
	/* Whichever took the mark first frees the block: the destroy (it
	 * waited for the look to give the claim back), or the look. */
	if (taken == &b->h) {
		if (n || is_free(b))
			fail("destroy: the look freed the block that the destroy took");
		ls_ext_free(taken, SIZE);
	} else if (taken || n != 1 || !is_free(b)) {
		fail("destroy: the destroy got %p, the look freed %u block(s): not one owner", (void *)taken,
		     n);
	}
	/* freed once: two allocations of its size get two blocks */
	void *x = ls_ext_alloc(SIZE), *y = ls_ext_alloc(SIZE);
	if (x == y)
		fail("destroy: a block was freed twice");
	ls_ext_free(x, SIZE);
	ls_ext_free(y, SIZE);
	munmap(pg, 4096);
}

static void nested(void)
{
	ls_ext_scan();
	char *pg = map_page();
	ls_ext_word_t *w = (ls_ext_word_t *)pg;
	struct blk *outer = attach(w);
	struct blk *inner = attach(&outer->inner);
	atomic_store(&reclaimed_inner, 0);
	munmap(pg, 4096);
	unsigned n = ls_ext_scan();
	if (n != 1 || !is_free(outer) || !is_free(inner) || atomic_load(&reclaimed_inner) != 1)
		fail("nested: the look reclaimed %u block(s); outer %s, inner %s", n,
		     is_free(outer) ? "freed" : "kept", is_free(inner) ? "freed" : "kept");
}

/* ---- churn ---- */

/* The interleavings that matter are forced, one by one, by raced, restored
 * and destroy; churn is their random companion, a scanner looking again and
 * again beside 3 x 5,000 lives of 4 uses each (60,000 checks of a tag). It
 * was 20,000 rounds: its time follows its yields, and on a busy machine
 * every yield is a time slice, the scanner spinning through it (32 s and
 * 9 s of CPU beside other work, for the same checks). */
#define CHURN_THREADS 3
#define CHURN_ROUNDS 5000
static _Atomic int churn_done;

static void *churner(void *arg)
{
	uintptr_t me = (uintptr_t)arg;
	unsigned seed = (unsigned)me * 2654435761u;
	for (int r = 0; r < CHURN_ROUNDS; r++) {
		seed = seed * 1103515245u + 12345u;
		ls_ext_word_t *w = calloc(1, 64); /* a new lock, as a constructor zeroes it */
		uintptr_t tag = me << 32 | (uintptr_t)r;
		struct blk *b = state(w);
		atomic_store(&b->tag, tag);
		for (int k = 0; k < 4; k++) {
			if ((seed >> 8) % 4 == 0) { /* copied away and back */
				ls_ext_word_t saved;
				memcpy(&saved, w, sizeof saved);
				atomic_store(w, NULL);
				sched_yield();
				memcpy(w, &saved, sizeof saved);
			}
			/* While the word was emptied the lock was gone: the pool
			 * may have reclaimed its block, and the restored lock
			 * then gets a fresh one (zeroed: an unlocked state),
			 * maybe the same. Never another lock's. */
			struct blk *s = state(w);
			uintptr_t t = atomic_load(&s->tag);
			if (t != tag && t != 0)
				fail("churn: a lock's block is another lock's (tag %#lx, not %#lx)",
				     (unsigned long)t, (unsigned long)tag);
			b = s;
			atomic_store(&b->tag, tag);
			sched_yield();
		}
		if ((seed >> 12) % 3 == 0) { /* destroy, then free */
			struct ls_ext_head *own = ls_ext_take(w, NULL);
			if (own)
				ls_ext_free(own, SIZE);
		}
		free(w); /* most without destroy */
	}
	return NULL;
}

static void *scanner(void *arg)
{
	(void)arg;
	while (!atomic_load(&churn_done))
		ls_ext_scan();
	return NULL;
}

static void churn(void)
{
	pthread_t t[CHURN_THREADS], s;
	atomic_store(&churn_done, 0);
	if (pthread_create(&s, NULL, scanner, NULL))
		fail("pthread_create");
	for (uintptr_t i = 0; i < CHURN_THREADS; i++)
		if (pthread_create(&t[i], NULL, churner, (void *)(i + 1)))
			fail("pthread_create");
	for (int i = 0; i < CHURN_THREADS; i++)
		pthread_join(t[i], NULL);
	atomic_store(&churn_done, 1);
	pthread_join(s, NULL);
}

/* ---- idle locks ---- */

/* An idle-marked block attached to w (as the shim's), or the one there. */
static struct blk *attach_idle(ls_ext_word_t *w)
{
	struct blk *b = ls_ext_alloc_for(w, SIZE, true);
	b->h.reclaim = ls_ext_reclaim_id(reclaim_blk);
	b->h.idle = 1;
	atomic_store(&b->h.used, 1);
	return (struct blk *)ls_ext_attach(w, &b->h, SIZE, NULL);
}

/* As a lock path: w's block, entered (attached if need be). */
static struct blk *enter(ls_ext_word_t *w)
{
	for (;;) {
		struct blk *b = (struct blk *)ls_ext_enter(w);
		if (b)
			return b;
		attach_idle(w);
	}
}

static void idle(void)
{
	ls_ext_scan();
	ls_ext_scan(); /* nothing of earlier cases */
	ls_ext_word_t *w = (ls_ext_word_t *)map_page();
	struct blk *used = attach_idle(&w[0]), *held = enter(&w[1]), *plain = state(&w[2]);
	struct blk *lazy = attach_idle(&w[3]);
	ls_ext_scan(); /* clears `used` of all */
	struct blk *again = enter(&w[0]);
	if (again != used)
		fail("idle: the block changed under a live lock");
	ls_hold_pop(&again->h); /* used, left */
	ls_ext_scan();
	if (is_free(used) || is_free(held) || is_free(plain))
		fail("idle: a block went that was used since the last look, held, or not marked idle");
	if (!is_free(lazy))
		fail("idle: an idle block unused for two looks was kept");
	ls_ext_scan();
	if (!is_free(used))
		fail("idle: an idle block unused since the last look was kept");
	if (is_free(held) || is_free(plain))
		fail("idle: a held block, or one not marked idle, went");
	if (atomic_load(&w[0]) != &used->h)
		fail("idle: the pool wrote the lock's word");
	struct blk *fresh = enter(&w[0]);
	if (is_free(fresh) || atomic_load(&w[0]) != &fresh->h || !ls_ext_mine(&w[0], &fresh->h))
		fail("idle: the lock's next use did not get a block of its own");
	ls_hold_pop(&fresh->h);
	ls_hold_pop(&held->h);
	ls_ext_scan();
	ls_ext_scan();
	if (!is_free(held) || !is_free(fresh))
		fail("idle: blocks left idle for two looks were kept");
}

/* 8,192 locks of two lines: 8 times the shortest interval between looks
 * (SCAN_MIN_LINES, pool.c), so that a lock comes back long after the
 * second look since its last use; and twenty times as many used once. */
#define WS_LOCKS 8192
#define ONCE_LOCKS (20 * WS_LOCKS)
static void reused(void)
{
	ls_ext_scan();
	ls_ext_scan();
	ls_ext_word_t *w = calloc(WS_LOCKS, sizeof *w), *once = calloc(ONCE_LOCKS, sizeof *once);
	struct blk **first = calloc(ONCE_LOCKS, sizeof *first);
	if (!w || !once || !first)
		fail("calloc");
	unsigned fresh = 0;
	for (int round = 0; round < 10; round++) {
		fresh = 0;
		for (int i = 0; i < WS_LOCKS; i++) {
			struct blk *b = (struct blk *)ls_ext_enter(&w[i]);
			if (!b) {
				fresh++;
				b = enter(&w[i]);
			}
			ls_hold_pop(&b->h);
		}
	}
	if (fresh > WS_LOCKS / 64)
		fail("reused: %u of %d locks used in turn attached a fresh block in the tenth round (the "
		     "pool took their blocks as idle between two uses)",
		     fresh, WS_LOCKS);
	/* locks used once: the window shrinks back, so every block but those
	 * of the last intervals' locks goes (an interval is at least half the
	 * blocks on the free lists: the first half of these locks must have
	 * lost theirs) */
	for (int i = 0; i < ONCE_LOCKS; i++)
		first[i] = enter(&once[i]), ls_hold_pop(&first[i]->h);
	unsigned kept = 0;
	for (int i = 0; i < ONCE_LOCKS / 2; i++)
		kept += ls_ext_mine(&once[i], &first[i]->h); /* (a block that went may be another's now) */
	if (kept > WS_LOCKS / 64)
		fail("reused: %u of the first %d locks used once kept their blocks after %d more were "
		     "made (memory followed them)",
		     kept, ONCE_LOCKS / 2, ONCE_LOCKS / 2);
	free(first);
}

/* A lock of its own page (*w) with an idle block, unused since the look
 * just made (nothing of earlier cases left to look at). */
static struct blk *idle_lock(ls_ext_word_t **w)
{
	ls_ext_scan();
	ls_ext_scan();
	*w = (ls_ext_word_t *)map_page();
	struct blk *b = attach_idle(&(*w)[0]);
	ls_ext_scan(); /* clears `used` */
	return b;
}

static void idle_raced(void)
{
	ls_ext_word_t *w;
	struct blk *b = idle_lock(&w);
	pthread_t t = start_look(2);
	/* claimed: the lock's next use undoes the claim and keeps the block */
	struct blk *e = enter(&w[0]);
	if (e != b)
		fail("idle-raced: a use during the claim did not keep the block");
	if (end_look(t) != 0 || is_free(b))
		fail("idle-raced: the look freed a block in use");
	ls_hold_pop(&e->h);
	/* the same with the hold taken before the claim (a holder): the look
	 * sees it after its barrier */
	e = enter(&w[0]);
	ls_ext_scan();
	t = start_look(2);
	if (end_look(t) != 0 || is_free(b))
		fail("idle-raced: the look freed a held block");
	ls_hold_pop(&e->h);
}

static ls_ext_word_t *raced_word;
static struct blk *raced_got;
static void *attacher(void *arg)
{
	(void)arg;
	attach_stop = 1;
	raced_got = attach_idle(raced_word);
	return NULL;
}

static void attach_raced(void)
{
	ls_ext_word_t *w;
	struct blk *b = idle_lock(&w);
	raced_word = &w[0];
	atomic_store(&attaching, 0);
	atomic_store(&attach_go, 0);
	pthread_t t;
	if (pthread_create(&t, NULL, attacher, NULL))
		fail("pthread_create");
	while (!atomic_load(&attaching))
		usleep(100);
	pthread_t look = start_look(2); /* claims b, which the attacher has read */
	atomic_store(&attach_go, 1);
	pthread_join(t, NULL);
	end_look(look);
	if (raced_got != b || atomic_load(&w[0]) != &b->h)
		fail("attach-raced: the attach did not keep the lock's own block, which a look had claimed");
	if (!ls_ext_mine(&w[0], &b->h))
		fail("attach-raced: the lock's block is not its own after the look");
}

static void stale(void)
{
	ls_ext_word_t *w;
	struct blk *b = idle_lock(&w);
	ls_ext_scan(); /* frees it: w still names it */
	if (!is_free(b) || atomic_load(&w[0]) != &b->h)
		fail("stale: the idle block did not go, its word naming it");
	struct blk *n = ls_ext_alloc_for(&w[0], SIZE, true);
	if (n == b)
		fail("stale: the block for a lock is the one its word still names");
	ls_ext_free(n, SIZE);
	struct blk *e = enter(&w[0]);
	if (!ls_ext_mine(&w[0], &e->h) || atomic_load(&w[0]) != &e->h)
		fail("stale: the lock's next use did not get a block of its own");
	ls_hold_pop(&e->h);
}

static ls_ext_word_t *pin_word;
static void *pin_holder(void *arg)
{
	(void)arg;
	enter(pin_word); /* and exits holding it */
	return NULL;
}

static void pinned(void)
{
	ls_ext_scan();
	ls_ext_scan();
	pin_word = (ls_ext_word_t *)map_page();
	pthread_t t;
	if (pthread_create(&t, NULL, pin_holder, NULL))
		fail("pthread_create");
	pthread_join(t, NULL);
	struct blk *b = (struct blk *)ls_ext_load(pin_word);
	for (int i = 0; i < 3; i++)
		ls_ext_scan();
	if (!b || is_free(b))
		fail("pinned: the block of a lock held by a thread that exited went");
}

static void overflow(void)
{
	ls_ext_scan();
	ls_ext_scan();
	ls_ext_word_t *w = (ls_ext_word_t *)map_page();
	struct blk *b[LS_HOLD_SLOTS + 2];
	for (int i = 0; i < LS_HOLD_SLOTS + 1; i++)
		b[i] = enter(&w[i]); /* one more than the record holds */
	struct blk *lone = attach_idle(&w[LS_HOLD_SLOTS + 1]);
	for (int i = 0; i < 3; i++)
		ls_ext_scan();
	if (is_free(lone))
		fail("overflow: an idle block went while a thread's holds were not all known");
	for (int i = LS_HOLD_SLOTS; i >= 0; i--)
		ls_hold_pop(&b[i]->h);
	for (int i = 0; i < 3; i++)
		ls_ext_scan();
	for (int i = 0; i <= LS_HOLD_SLOTS + 1; i++)
		if (is_free(i <= LS_HOLD_SLOTS ? b[i] : lone))
			fail("overflow: a block went after holds were lost");
}

/* ---- a thread refused a record ---- */

#define OCCUPIERS 64	     /* more than the records earlier cases left free */
#define MAX_TAKEN (1u << 20) /* every block the pool can still give */
static void *kept[MAX_TAKEN];
static size_t kept_sizes[MAX_TAKEN];
static ls_ext_word_t *occ_word;
static _Atomic int occ_phase, occ_done, occ_refused, occ_asked, occ_lost;

/* A record of holds: a real one has room above its top; the pool's
 * stand-ins (none yet, refused) have none. */
static bool has_record(void)
{
	return ls_holds_me->top != ls_holds_me->end;
}

static void *occupier(void *arg)
{
	(void)arg;
	while (atomic_load(&occ_phase) < 1)
		usleep(100);
	struct blk *b = enter(occ_word);
	bool refused = !has_record();
	for (int i = 0; i < 100; i++) {
		struct blk *c = enter(occ_word);
		if (c != b)
			atomic_fetch_add(&occ_lost, 1);
		ls_hold_pop(&c->h);
	}
	atomic_fetch_add(&occ_done, 1);
	while (atomic_load(&occ_phase) < 2)
		usleep(100);
	struct blk *c = enter(occ_word);
	if (refused) {
		atomic_fetch_add(&occ_refused, 1);
		if (has_record())
			atomic_fetch_add(&occ_asked, 1);
	}
	ls_hold_pop(&c->h);
	ls_hold_pop(&b->h);
	return NULL;
}

static void refused(void)
{
	occ_word = (ls_ext_word_t *)map_page();
	ls_hold_pop(&enter(occ_word)->h);
	pthread_t t[OCCUPIERS];
	for (int i = 0; i < OCCUPIERS; i++) /* their stacks before the limit */
		if (pthread_create(&t[i], NULL, occupier, NULL))
			fail("pthread_create");
	/* no address space left: every block the pool still has, of each
	 * size a record or a lock takes */
	static const size_t sizes[] = {LS_EXT_MAX, (sizeof(struct ls_holds) + 63) & ~(size_t)63, 64};
	struct nomem nm = {.blocks = kept, .sizes = kept_sizes, .max = MAX_TAKEN};
	nomem_begin(&nm, sizes, sizeof sizes / sizeof sizes[0]);
	atomic_store(&occ_phase, 1);
	while (atomic_load(&occ_done) < OCCUPIERS)
		usleep(100);
	nomem_end(&nm);
	atomic_store(&occ_phase, 2);
	for (int i = 0; i < OCCUPIERS; i++)
		pthread_join(t[i], NULL);
	if (atomic_load(&occ_lost))
		fail("refused: a thread entering the lock got another block than its own");
	if (atomic_load(&occ_refused) == 0)
		fail("refused: every one of %d threads got a record with no memory left", OCCUPIERS);
	if (atomic_load(&occ_asked))
		fail("refused: %d of %d threads refused a record asked for one again",
		     atomic_load(&occ_asked), atomic_load(&occ_refused));
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*run)(void);
	} cases[] = {{"gone", gone},
		     {"raced", raced},
		     {"restored", restored},
		     {"destroy", destroy},
		     {"nested", nested},
		     {"churn", churn},
		     {"idle", idle},
		     {"reused", reused},
		     {"idle-raced", idle_raced},
		     {"attach-raced", attach_raced},
		     {"stale", stale},
		     {"pinned", pinned},
		     {"overflow", overflow},
		     {"refused", refused}};
	const char *which = argc == 2 ? argv[1] : "";
	bool any = false;
	/* the protocol is under test: peek even under a seccomp filter
	 * (LOCKSWAP_RECLAIM=on; its default, auto, would not, pool.h) */
	char err[256];
	for (size_t i = 0; i < ls_option_count(); i++)
		if (!strcmp(ls_option_at(i)->env, "LOCKSWAP_RECLAIM") &&
		    ls_option_at(i)->parse("on", err, sizeof err))
			fail("LOCKSWAP_RECLAIM: %s", err);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (!strcmp(which, "all") || !strcmp(which, cases[i].name)) {
			cases[i].run();
			printf("ext_reclaim: OK %s\n", cases[i].name);
			any = true;
		}
	if (!any) {
		fprintf(stderr, "ext_reclaim: usage: ext_reclaim "
				"gone|raced|restored|destroy|nested|churn|idle|reused|idle-raced|attach-"
				"raced|stale|pinned|"
				"overflow|refused|all\n");
		return 2;
	}
	return 0;
}
