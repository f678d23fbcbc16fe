/*
 * peek.h - what the pool needs from the kernel to reclaim the out-of-line
 * blocks of locks that are gone (pool.h, "Reclaiming"): reading words of
 * the process's own memory that may have been freed or unmapped, without
 * faulting, and a memory barrier on every thread of the process.
 *
 * One look at the pool's blocks is a session: ls_peek_begin, any number of
 * ls_peek_words and ls_peek_barrier, ls_peek_end. The caller serialises
 * sessions (the pool's scan lock); errno is kept. Nothing here is on a
 * lock's fast path: the pool looks only when its blocks run out.
 *
 * How (peek.c): process_vm_readv on the own pid (a word that cannot be
 * read fails that element, not the process; mincore then tells a page
 * that is gone from one that is mapped but unreadable), and membarrier
 * (MEMBARRIER_CMD_PRIVATE_EXPEDITED, registered at first use, Linux 4.14;
 * else MEMBARRIER_CMD_GLOBAL). A seccomp filter (Docker's default profile,
 * systemd's SystemCallFilter=, a browser's sandbox) may kill the process
 * for a call it does not list rather than fail it, so LOCKSWAP_RECLAIM
 * (auto, the default) makes none of these calls while a filter is on (the
 * Seccomp line of /proc/self/status, read at each begin: a program may
 * install one at any time; without /proc, none either): nothing is
 * reclaimed then. LOCKSWAP_RECLAIM=on makes them under a filter too (a
 * filter that fails them with an error, as Docker's does, only turns
 * reclamation off); =off never reclaims.
 */
#ifndef LS_PEEK_H
#define LS_PEEK_H

#include <stdbool.h>
#include <stdint.h>

#define LS_PEEK_MAX 1024u /* words per ls_peek_words */

enum ls_peek_how {
	LS_PEEK_READ,	    /* val holds the word */
	LS_PEEK_GONE,	    /* its page is not mapped */
	LS_PEEK_UNREADABLE, /* mapped but not readable (PROT_NONE) */
};

/* A session can be had: false (nothing may be reclaimed now) if the
 * process may not, or cannot, peek. */
bool ls_peek_begin(void);
/* Reads the 8-byte words at addr[0..n) (8-aligned, n <= LS_PEEK_MAX):
 * how[i] says whether val[i] holds the word. False if reading failed as a
 * whole (the kernel refuses process_vm_readv): nothing is known. */
bool ls_peek_words(const uintptr_t *addr, uintptr_t *val, uint8_t *how, unsigned n);
/* A full memory barrier on every running thread of the process (the
 * others have been switched out, which is one). False if none could be
 * had. */
bool ls_peek_barrier(void);
void ls_peek_end(void);

#endif
