# lockswap - see README.md.
#
#   make            build/liblockswap.so, build/lockswap, build/liblocks.a, and
#                   every program README tells users to run (build/lockbench)
#   make demo       install missing Debian packages, build, run the demo
#   make test       install missing Debian packages, build, run every test
#   make install PREFIX=/usr/local [DESTDIR=DIR]   (mk/man.mk: man pages, completion)
#   make deb        a Debian package, in build/deb/ (mk/deb.mk)
#   make format, make format-check   (clang-format; the tree is kept formatted)
#   make bench, make core-bench   (mk/lockbench.mk), make splash2 (mk/splash2.mk),
#   make asan (mk/abortable.mk)
#
# Sources are found by wildcard: an algorithm is a new locks/FAMILY/*.c, a unit test
# a new tests/unit/*.c, a test program a new tests/progs/*.c[pp], a bats file
# a new tests/*.bats. Other parts of the tree add rules in mk/*.mk; a program
# users run (a `lockswap SUBCOMMAND`, build/lockswap-SUBCOMMAND) is added with
# `all: PROG` and `INSTALL_BINS += PROG` there.

PREFIX ?= /usr/local
CC ?= cc
CXX ?= c++
B := build

WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=gnu11 -pthread -fPIC -fvisibility=hidden $(WARN) $(CFLAGS) -Ilocks -Ilocks/common -Iinterpose \
	-Istack -Imatch
# The shim is compiled without -fexceptions: pthread_cleanup_push in the
# condvar wait is then glibc's setjmp-based kind, which the forced unwind of
# pthread_cancel runs in C and C++ threads alike (see interpose/mutex_cond.c).
SHIM_CFLAGS := $(ALL_CFLAGS) -fasynchronous-unwind-tables

LOCK_SRCS := $(sort $(wildcard locks/*.c locks/*/*.c))
SHIM_SRCS := $(sort $(wildcard interpose/*.c profile/*.c stack/*.c match/*.c))
LOCK_OBJS := $(LOCK_SRCS:%.c=$(B)/%.o)
INJ_OBJS := $(LOCK_SRCS:%.c=$(B)/inject/%.o)
SHIM_OBJS := $(SHIM_SRCS:%.c=$(B)/%.o)
HDRS := $(wildcard locks/*.h locks/*/*.h interpose/*.h profile/*.h stack/*.h match/*.h)

UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/unit/%)
PROG_C := $(sort $(wildcard tests/progs/*.c))
PROG_CXX := $(sort $(wildcard tests/progs/*.cpp))
PROG_BINS := $(PROG_C:tests/progs/%.c=$(B)/progs/%) $(PROG_CXX:tests/progs/%.cpp=$(B)/progs/%)

LIB := $(B)/liblockswap.so
CMD := $(B)/lockswap

.PHONY: all demo test check install deps-demo deps-test clean format format-check tests-build
all: $(LIB) $(CMD) $(B)/liblocks.a

$(B)/locks/%.o: locks/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# Stress build of the algorithms: LS_INJECT() becomes a random delay/yield.
$(B)/inject/locks/%.o: locks/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DLS_FAULT_INJECT -c $< -o $@

$(B)/interpose/%.o: interpose/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(SHIM_CFLAGS) -c $< -o $@

$(B)/profile/%.o: profile/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(SHIM_CFLAGS) -c $< -o $@

$(B)/stack/%.o: stack/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(SHIM_CFLAGS) -c $< -o $@

$(B)/match/%.o: match/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(SHIM_CFLAGS) -c $< -o $@

$(B)/liblocks.a: $(LOCK_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(B)/liblocks-inject.a: $(INJ_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(LIB): $(LOCK_OBJS) $(SHIM_OBJS) interpose/liblockswap.map
	$(CC) -shared -pthread -o $@ $(LOCK_OBJS) $(SHIM_OBJS) \
		-Wl,--version-script=interpose/liblockswap.map -Wl,-z,now -ldl

$(CMD): scripts/cli/lockswap.c scripts/cli/cli.h $(B)/liblocks.a $(HDRS)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -o $@ $< \
		-Wl,--whole-archive $(B)/liblocks.a -Wl,--no-whole-archive

# Unit and stress tests link the algorithms directly, without LD_PRELOAD.
# Each is built twice: plain, and against the fault-injecting archive.
$(B)/unit/%: tests/unit/%.c $(B)/liblocks.a $(B)/liblocks-inject.a $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -Itests/unit -o $@ $< \
		-Wl,--whole-archive $(B)/liblocks.a -Wl,--no-whole-archive
	$(CC) $(ALL_CFLAGS) -fvisibility=default -Itests/unit -DLS_FAULT_INJECT -o $@-inject $< \
		-Wl,--whole-archive $(B)/liblocks-inject.a -Wl,--no-whole-archive

# Test programs are ordinary pthread programs: they know nothing of lockswap.
$(B)/progs/%: tests/progs/%.c $(wildcard tests/progs/*.h)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -g -pthread $(WARN) -Wno-error=deprecated-declarations -o $@ $<

$(B)/progs/%: tests/progs/%.cpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O1 -g -pthread $(WARN) -o $@ $<

tests-build: all $(UNIT_BINS) $(PROG_BINS)

-include $(sort $(wildcard mk/*.mk))

deps-test:
	@scripts/deps.sh test
deps-demo:
	@scripts/deps.sh demo

# The README's two commands.
test: deps-test
	@$(MAKE) --no-print-directory tests-build
	@scripts/run-tests
check: test

demo: deps-demo
	@$(MAKE) --no-print-directory all $(B)/demo-contend
	@scripts/demo

$(B)/demo-contend: scripts/demo.c
	$(CC) -std=gnu11 -O2 -pthread $(WARN) -o $@ $<

# PREFIX/bin: lockswap and its subcommands (INSTALL_BINS, from mk/*.mk);
# PREFIX/lib: the library (lockswap finds it in ../lib); the man pages and
# the bash completion (mk/man.mk). DESTDIR stages it (make deb does).
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(BASHCOMPDIR)
	install -m 0644 $(LIB) $(DESTDIR)$(PREFIX)/lib/liblockswap.so
	install -m 0755 $(CMD) $(DESTDIR)$(PREFIX)/bin/lockswap
	$(if $(strip $(INSTALL_BINS)),install -m 0755 $(INSTALL_BINS) $(DESTDIR)$(PREFIX)/bin/)
	install -m 0644 $(B)/man/lockswap.1 $(DESTDIR)$(MANDIR)/man1/lockswap.1
	install -m 0644 $(B)/man/lockswap.7 $(DESTDIR)$(MANDIR)/man7/lockswap.7
	install -m 0644 scripts/completion/lockswap $(DESTDIR)$(BASHCOMPDIR)/lockswap

# The tree follows .clang-format: `make format` rewrites nothing, and
# `make format-check` (run by tests/format.bats) fails on any file that
# clang-format would change.
FORMAT_FILES = $$(git ls-files '*.c' '*.h' '*.cpp')
format:
	clang-format -i $(FORMAT_FILES)
format-check:
	clang-format --dry-run -Werror $(FORMAT_FILES)

clean:
	rm -rf $(B)
