/*
 * match.h - per-lock rules (LOCKSWAP_ALGO_MAP, LOCKSWAP_CONFIG): which rule
 * a mutex's or rwlock's creation stack matches. The matcher knows rules,
 * stacks and symbols; it never sees a lock or an algorithm (the shim's
 * binding, interpose/bind*.c, turns a rule's target into an algorithm, and
 * so into a family of locks, and keeps each lock's choice).
 *
 * Rules, in the order written, separated by commas or newlines:
 *	FUNCTION=TARGET		a function on the creation stack (its ELF
 *				symbol name: static functions too, no debug
 *				information needed; C++ names as mangled)
 *	FILE:LINE=TARGET	a call made at that source line (DWARF line
 *				information: the module's own, or a debug file
 *				found by build-id or .gnu_debuglink); FILE is a
 *				file name or the end of a path
 *	MODULE=TARGET		code of that module: a name with ".so" (libfoo.so
 *				matches libfoo.so.1 too) or with a '/' (a path,
 *				or its end: ./app, bin/app)
 *	MODULE+0xOFFSET=TARGET	the call that returns to that offset of a module
 *				(any module name: app+0x1bc00), as a profile
 *				names a frame of a program without symbols
 *	*=TARGET		every other lock of the target's family
 * A lock takes the first rule of its family (the shim says which rules
 * those are: bind_rules.c) that names any frame of its creation stack (the
 * innermost LS_MATCH_FRAMES frames above lockswap: for a lock initialised
 * with pthread_*_init, the stack of that call; for a static initialiser or
 * zeroed memory, the stack of its first use), else its family's '*' rule,
 * else none (the shim's default).
 *
 * A TARGET is opaque here (an algorithm name for the shim), except that a
 * waiting policy (TARGET/POLICY) is refused, for either family: the policy is read inside
 * every algorithm's waiting loops, process-wide (locks/common/wait.h), and
 * a per-mutex one would cost every lock call a thread-local store.
 */
#ifndef LS_MATCH_H
#define LS_MATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LS_MATCH_MAX 64	   /* rules */
#define LS_MATCH_FRAMES 32 /* frames of a creation stack looked at */
#define LS_MATCH_NONE (-1)

enum ls_rule_kind { LS_RULE_FUNC, LS_RULE_LINE, LS_RULE_MODULE, LS_RULE_OFFSET, LS_RULE_ANY };

struct ls_rule {
	enum ls_rule_kind kind;
	const char *text;    /* as written, e.g. "queue_push=mcs-tp" */
	const char *pattern; /* "queue_push", "queue.c", "libfoo.so", "*" */
	unsigned line;	     /* LS_RULE_LINE */
	uint64_t offset;     /* LS_RULE_OFFSET (pattern: the module) */
	const char *target;  /* "mcs-tp" */
	const char *where;   /* for messages: "LOCKSWAP_ALGO_MAP", "LOCKSWAP_CONFIG FILE:LINE" */
};

/* Parses rules. `text`: the value of LOCKSWAP_ALGO_MAP (comma or newline
 * separated); ls_match_parse_file: a file of them (LOCKSWAP_CONFIG), where
 * '#' starts a comment. Once per process, before ls_match_start. 0, or -1
 * with one line in err naming the rule and what is wrong. */
int ls_match_parse(const char *text, char *err, size_t len);
int ls_match_parse_file(const char *path, char *err, size_t len);

unsigned ls_match_count(void);
const struct ls_rule *ls_match_rule(unsigned i);

/* After the shim's initialisation (may dlopen, allocate, lock): loads
 * libunwind if a rule needs stacks, and libdw if one needs lines. 0, or -1
 * with one line in err. */
int ls_match_start(char *err, size_t len);

/* The rule for the lock the caller is creating (or using first): the first
 * of the rules in `among` (a mask of rule indices: one family's) that names
 * a frame of the caller's stack, else `any` (that family's '*' rule, or
 * LS_MATCH_NONE). At most one stack walk; any thread, concurrently. Before
 * ls_match_start, and for the locks the matcher's own work uses (called
 * again from inside the matcher or the unwinder on the same thread), no
 * walk: `any` (counted in `unwalked`). */
int ls_match_caller(uint64_t among, int any);

struct ls_match_stats {
	uint64_t walks;	   /* stacks taken */
	uint64_t unwalked; /* answered without a walk (see ls_match_caller) */
	uint64_t resolved; /* frames looked up (each return address once, cached) */
};
void ls_match_stats(struct ls_match_stats *out);

/* Why rule i chose no mutex, as far as the loaded modules tell: one
 * phrase into buf ("no function named f in the program or its loaded
 * libraries", ...), or "" if the rule could have matched. Not on a lock
 * path (at exit, under LOCKSWAP_VERBOSE). */
void ls_match_why_not(unsigned i, char *buf, size_t len);

#endif
