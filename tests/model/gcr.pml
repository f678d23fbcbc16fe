/*
 * gcr.pml - a model of locks/wrap/gcr.c for spin(1): the wrapper word W,
 * the passive queue and the head's sleep, for one mutex.
 *
 *   spin -a [-DNW=2] [-DITER=1] [-DMISUSE=1] [-DMAXA=1] [-DPER=2] [-DOLD] tests/model/gcr.pml
 *   gcc -O2 -fwrapv -DSAFETY -DCOLLAPSE -o pan pan.c && ./pan -m200000
 *
 * NW workers each take the lock ITER times, each time by lock(), trylock()
 * or a timed lock (which may time out at any of its waits), and release
 * it; MISUSE more threads each unlock the mutex once without holding it
 * (at any moment: an unlock of the unlocked mutex, or of one another thread
 * holds, racing with everything). The base lock is a flag; the bucket lock
 * a flag; futex_wait/wake as the kernel's, on W. Every step of gcr.c that
 * is one atomic instruction is one atomic step here; the head may spin or
 * sleep at each check (any spin budget). spin checks that no thread waits
 * for ever (invalid end states), mutual exclusion (without MISUSE: with it
 * a racing unlock may let two in, as under glibc) and that W, the queue and
 * the base lock are idle at the end (W but for an unrepaired borrow, which
 * one more lock/unlock then repairs). -DOLD: gcr.c's misuse repair before it
 * read W through norm() (an unconditional +1, the borrowed word read raw):
 * with MISUSE=1, NW=2, ITER=1 spin finds a passive head asleep for ever.
 * Checked, no error (MAXA=1 PER=2 unless said): NW=2 ITER=2 MISUSE=1
 * (1.35e8 states, 17 min), NW=2 ITER=1 MISUSE=2 (5.4e7), NW=3 ITER=1
 * (1.9e7), NW=2 ITER=2 (4.5e6), NW=3 ITER=1 MAXA=2 PER=1 (2.7e6).
 */
#ifdef OLD
#define FIX 0
#else
#define FIX 2
#endif
#ifndef MAXA
#define MAXA 1
#endif
#ifndef PER
#define PER 2
#endif
#ifndef NW
#define NW 3
#endif
#ifndef ITER
#define ITER 2
#endif
#ifndef MISUSE
#define MISUSE 0
#endif
#define REJOIN ((MAXA >= 2) -> (MAXA / 2) : 1)

#define AMASK 65535
#define COUNT_ONE 65536
#define COUNT_MASK 536805376
#define SLEEP 536870912
#define APPROVED 1073741824
#define PASSIVE (-2147483647 - 1)
#define ACT(x) ((x) & AMASK)

#define NP (NW + MISUSE + 3) /* pids: monitor, init, workers, misusers, the last worker */
#if FIX == 2
#define NORM(v) if :: ACT(v) >= 32768 -> d = 65536 - ACT(v) :: else -> d = 0 fi; t = v + d
#else
#define NORM(v) d = 0; t = v
#endif
int W;
bit base;
byte inside;
byte q[NP];
byte qlen;
bit blk;
bit headf[NP];
bit asleep[NP];
byte finished;

inline futex_wake() {
	atomic {
		byte k = 0;
		do
		:: k < NP && asleep[k] -> asleep[k] = 0; break
		:: k < NP && !asleep[k] -> k++
		:: k >= NP -> break
		od
	}
}

inline wake_head(v) {
	do
	:: NORM(v);
		if
		:: !(t & SLEEP) -> break
		:: else -> skip
		fi;
		atomic {
			if
			:: W == v -> W = (t & ~SLEEP) - d; ok = 1
			:: else -> v = W; ok = 0
			fi
		}
		if
		:: ok -> futex_wake(); break
		:: else -> skip
		fi
	od
}

inline leave_active() {
	atomic { W = W - 1; v = W }
	NORM(v);
	if
	:: (t & SLEEP) && ACT(t) < REJOIN -> wake_head(v)
	:: else -> skip
	fi
}

inline bucket_lock() { atomic { blk == 0 -> blk = 1 } }
inline bucket_unlock() { blk = 0 }

/* r: 0 joined, 1 timed out */
inline head_wait(timed) {
	do
	:: v = W;
		NORM(v);
		if
		:: (t & APPROVED) -> n = (t & ~(APPROVED | SLEEP)) + 1
		:: !(t & APPROVED) && ACT(t) < REJOIN -> n = (t & ~SLEEP) + 1
		:: else -> n = 0
		fi;
		if
		:: n != 0 ->
			atomic {
				if
				:: W == v -> W = n - d; ok = 1
				:: else -> ok = 0
				fi
			}
			if
			:: ok -> r = 0; break
			:: else -> skip
			fi
		:: n == 0 ->
			if
			:: timed -> r = 1; break
			:: true -> skip /* spin once more */
			:: true -> /* head_sleep(v) */
				ok = 1;
				if
				:: !(t & SLEEP) ->
					atomic {
						if
						:: W == v -> W = (t | SLEEP) - d; v = W
						:: else -> ok = 0
						fi
					}
				:: else -> skip
				fi;
				if
				:: ok ->
					atomic {
						if
						:: W == v -> asleep[_pid] = 1
						:: else -> skip
						fi
					}
					if
					:: asleep[_pid] == 0 -> skip
					:: timed -> atomic { asleep[_pid] = 0; r = 1 }; break
					fi
				:: else -> skip
				fi
			fi
		fi
	od
}

inline passive_wait(timed) {
	bucket_lock();
	first = (qlen == 0);
	q[qlen] = _pid; qlen++;
	if
	:: first ->
		headf[_pid] = 1;
		atomic { v = W; NORM(v); if :: !(t & PASSIVE) -> W = (t | PASSIVE | COUNT_ONE) - d :: else -> skip fi }
	:: else -> skip
	fi;
	bucket_unlock();
	r = 0;
	if
	:: !first ->
		if
		:: headf[_pid] == 1 -> skip
		:: timed -> r = 1
		fi
	:: else -> skip
	fi;
	if
	:: r == 0 -> head_wait(timed)
	:: else -> skip
	fi;
	/* leave_queue */
	bucket_lock();
	j = 0;
	do
	:: q[j] == _pid -> break
	:: else -> j++
	od;
	do
	:: j + 1 < qlen -> q[j] = q[j + 1]; j++
	:: else -> break
	od;
	qlen--;
	if
	:: headf[_pid] ->
		headf[_pid] = 0;
		if
		:: qlen > 0 ->
			atomic { v = W; NORM(v); W = (t & ~SLEEP) - d };
			headf[q[0]] = 1
		:: else ->
			atomic { v = W; NORM(v); W = (t & ~(PASSIVE | COUNT_MASK | SLEEP | APPROVED)) - d }
		fi
	:: else -> skip
	fi;
	bucket_unlock()
}

inline base_unlock() { base = 0 }

inline unlock_op() {
	atomic { W = W - 1; v = W }
	if
	:: v >= 0 -> base_unlock()
	:: v < 0 -> /* unlock_slow */
		v = W;
#if FIX == 2
		wake = 0;
		do
		:: NORM(v);
			if
			:: d != 0 ->
				atomic {
					if
					:: W == v -> W = v + 1; ok = 1
					:: else -> v = W; ok = 0
					fi
				}
				if
				:: ok -> break
				:: else -> skip
				fi
			:: d == 0 && !(v & PASSIVE) -> break
			:: d == 0 && (v & PASSIVE) ->
				n = v;
				c = (v & COUNT_MASK) >> 16;
				if
				:: PER > 0 ->
					c++;
					if
					:: c > PER -> c = 1; n = n | APPROVED
					:: else -> skip
					fi;
					n = (n & ~COUNT_MASK) | (c << 16)
				:: else -> skip
				fi;
				wake = ((n & SLEEP) && ((n & APPROVED) || ACT(n) < REJOIN));
				if
				:: wake -> n = n & ~SLEEP
				:: else -> skip
				fi;
				atomic {
					if
					:: n == v -> ok = 1
					:: W == v -> W = n; ok = 1
					:: else -> v = W; ok = 0
					fi
				}
				if
				:: ok -> break
				:: else -> wake = 0
				fi
			fi
		od;
		base_unlock();
		if
		:: wake -> futex_wake()
		:: else -> skip
		fi
#else
		if
		:: ACT(v) == AMASK ->
			atomic { W = W + 1 };
			base_unlock()
		:: else ->
			wake = 0;
			do
			:: !(v & PASSIVE) -> break
			:: (v & PASSIVE) ->
				n = v;
				c = (v & COUNT_MASK) >> 16;
				if
				:: PER > 0 ->
					c++;
					if
					:: c > PER -> c = 1; n = n | APPROVED
					:: else -> skip
					fi;
					n = (n & ~COUNT_MASK) | (c << 16)
				:: else -> skip
				fi;
				wake = ((n & SLEEP) && ((n & APPROVED) || ACT(n) < REJOIN));
				if
				:: wake -> n = n & ~SLEEP
				:: else -> skip
				fi;
				atomic {
					if
					:: n == v -> ok = 1
					:: W == v -> W = n; ok = 1
					:: else -> v = W; ok = 0
					fi
				}
				if
				:: ok -> break
				:: else -> wake = 0
				fi
			od;
			base_unlock();
			if
			:: wake -> futex_wake()
			:: else -> skip
			fi
		fi
#endif
	fi
}

proctype worker(byte iters; bit lockonly)
{
	int v, n, old, t, d;
	byte c, j, it = 0;
	bit ok, wake, first, r, timed;
	do
	:: it < iters ->
		it++;
		timed = 0;
		if
		:: true -> /* lock */
			atomic { old = W; W = W + 1 }
			if
			:: ACT(old) >= MAXA ->
				leave_active();
				passive_wait(0)
			:: else -> skip
			fi;
			atomic { base == 0 -> base = 1 }
			r = 0
		:: !lockonly -> /* trylock */
			atomic {
				if
				:: base == 0 -> base = 1; r = 0
				:: else -> r = 1
				fi
			}
			if
			:: r == 0 -> atomic { W = W + 1 }
			:: else -> skip
			fi
		:: !lockonly -> /* timedlock */
			timed = 1;
			atomic { old = W; W = W + 1 }
			r = 0;
			if
			:: ACT(old) >= MAXA ->
				leave_active();
				passive_wait(1)
			:: else -> skip
			fi;
			if
			:: r == 0 ->
				if
				:: atomic { base == 0 -> base = 1 }
				:: true -> r = 1; leave_active()
				fi
			:: else -> skip
			fi
		fi;
		if
		:: r == 0 ->
			inside++;
			assert(MISUSE || inside == 1);
			inside--;
			unlock_op()
		:: else -> skip
		fi
	:: else -> break
	od;
	finished++
}

proctype misuser()
{
	int v, n, t, d;
	byte c;
	bit ok, wake;
	unlock_op();
	finished++
}

/* Once all are done: nothing queued, the lock free, W idle but for
 * unlocks of the unlocked mutex not yet repaired (a timed waiter that gave
 * up can show one again: the next unlock repairs it); then one more
 * lock/unlock must complete and leave W idle. */
active proctype monitor()
{
	int v, t, d;
	(finished == NW + MISUSE) ->
	v = W;
	NORM(v);
	assert((MISUSE && FIX == 0) || (t == 0 && qlen == 0 && base == 0));
	run worker(1, 1);
	(finished == NW + MISUSE + 1) ->
	assert((MISUSE && FIX == 0) || W == 0)
}

init {
	atomic {
		byte i = 0;
		do
		:: i < NW -> run worker(ITER, 0); i++
		:: else -> break
		od;
		i = 0;
		do
		:: i < MISUSE -> run misuser(); i++
		:: else -> break
		od
	}
}
