/*
 * symbols - a program that exports a few functions around code it does not
 * export, and uses a library built the same way (symbols_lib.c), for the
 * names lockswap prints (tests/report.bats): stripped, as Debian ships
 * programs, each module keeps only its exported functions (.dynsym), and
 * the nearest of them below an address in unexported code is not that
 * code's function.
 *
 * Built by mk/profile.mk (build/symbols/): the program exports the
 * functions named sym_exported_* (--export-dynamic-symbol) and is linked
 * with libsymbols.so beside it; both are stripped, their debug files kept
 * apart. In this file's order (-fno-toplevel-reorder): sym_exported_first,
 * then the unexported creator and waiter, then the exported creator and
 * sym_exported_last.
 *
 *   symbols known   four mutexes, each created once and waited for once
 *                   (the main thread holds it until a thread sleeps in its
 *                   lock call): #1 by hidden_make (unexported), #2 by
 *                   sym_exported_make, #3 by the library's unexported
 *                   lib_hidden_make, #4 by its exported symlib_make
 */
#include <stdbool.h>

#include "check.h"

#define FRAME __attribute__((noinline, noclone))
#define KEEP() __asm__ volatile("" ::: "memory")

void sym_exported_first(void);
void sym_exported_make(void);
void sym_exported_last(void);
/* the library's exported functions */
void symlib_make_hidden_path(pthread_mutex_t *m);
void symlib_make(pthread_mutex_t *m);
void symlib_take(pthread_mutex_t *m);

static pthread_mutex_t m_hidden, m_exported, m_lib_hidden, m_lib_exported;
static volatile unsigned long sink;

FRAME void sym_exported_first(void)
{
	sink++;
	KEEP();
}

static FRAME void hidden_make(void)
{
	CHECK_RC(pthread_mutex_init(&m_hidden, NULL), 0);
	KEEP();
}

static FRAME void hidden_take(pthread_mutex_t *m)
{
	CHECK_RC(pthread_mutex_lock(m), 0);
	sink++;
	CHECK_RC(pthread_mutex_unlock(m), 0);
	KEEP();
}

struct one {
	pthread_mutex_t *m;
	bool lib;
	atomic_int tid;
};

static FRAME void *waiter(void *p)
{
	struct one *o = p;
	atomic_store(&o->tid, (int)gettid());
	if (o->lib)
		symlib_take(o->m);
	else
		hidden_take(o->m);
	KEEP();
	return NULL;
}

FRAME void sym_exported_make(void)
{
	CHECK_RC(pthread_mutex_init(&m_exported, NULL), 0);
	KEEP();
}

FRAME void sym_exported_last(void)
{
	sink++;
	KEEP();
}

/* Holds m while a thread waits for it in its lock call, then lets it in. */
static void wait_once(pthread_mutex_t *m, bool lib)
{
	struct one o = {.m = m, .lib = lib};
	CHECK_RC(pthread_mutex_lock(m), 0);
	pthread_t t = spawn(waiter, &o);
	while (!atomic_load(&o.tid))
		sched_yield();
	if (!await_sleeping(atomic_load(&o.tid), 60000))
		FAIL("the waiter never slept in its lock call");
	CHECK_RC(pthread_mutex_unlock(m), 0);
	join(t);
}

static void known(void)
{
	hidden_make();
	sym_exported_make();
	symlib_make_hidden_path(&m_lib_hidden);
	symlib_make(&m_lib_exported);
	wait_once(&m_hidden, false);
	wait_once(&m_exported, false);
	wait_once(&m_lib_hidden, true);
	wait_once(&m_lib_exported, true);
	sym_exported_first();
	sym_exported_last();
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {{"known", known}, {NULL, NULL}};
	return run_case(cases, argc, argv);
}
