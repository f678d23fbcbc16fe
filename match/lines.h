/*
 * lines.h - source lines of code addresses, for FILE:LINE rules (match.c):
 * elfutils' libdwfl, dlopen'ed by ls_lines_start only when such a rule
 * exists. The matcher calls these under its lock only (libdwfl is not
 * thread-safe).
 */
#ifndef LS_MATCH_LINES_H
#define LS_MATCH_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Loads libdw and reports this process's modules to it. 0, or -1 with one
 * line in err. */
int ls_lines_start(char *err, size_t len);

/* The source file and line of the code at addr (a call: ask for a return
 * address minus 1). false if no module with line information holds it.
 * *file stays valid until the matcher's next ls_lines_* call. */
bool ls_lines_at(uintptr_t addr, const char **file, int *line);

/* Whether a loaded module has code at file:line (file: a name or the end
 * of a path, as in a rule); *any_info: whether any module that has
 * line information at all for a file of that name exists. */
bool ls_lines_exist(const char *file, unsigned line, bool *any_info);

/* A module was unloaded: addresses may mean other code now. */
void ls_lines_forget(void);

#endif
