/*
 * timed.c - the timed fallback of the reader-writer family (rwlock.h): for
 * an algorithm without native timed acquisitions, the try operation polled
 * under the waiting policy until the deadline (ls_poll_until, the loop of
 * the mutexes' ls_timedlock_fallback). A poller is in no queue, so it
 * leaves nothing behind when it gives up, and it can be overtaken.
 */
#include "rwlock.h"
#include "wait.h"

struct poll_arg {
	const struct ls_rwalgo *a;
	void *state;
	unsigned how;
	void **token;
};

static int try_read(void *arg)
{
	struct poll_arg *p = arg;
	return p->a->tryrdlock(p->state, p->how, p->token);
}

static int try_write(void *arg)
{
	struct poll_arg *p = arg;
	return p->a->trywrlock(p->state, p->how);
}

int ls_rw_timed_fallback(const struct ls_rwalgo *a, void *state, unsigned how, bool write, uint64_t deadline,
			 void **token)
{
	struct poll_arg p = {a, state, how, token};
	return ls_poll_until(write ? try_write : try_read, &p, deadline);
}
