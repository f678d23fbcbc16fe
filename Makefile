# lockswap - see README.md.
#
#   make            build/liblockswap.so, build/lockswap, build/liblocks.a, and
#                   every program README tells users to run (build/lockbench)
#   make demo       install missing Debian packages, build, run the demo
#   make test       install missing Debian packages, build, run every test
#   make test-quick build, run the edit-compile loop's check (scripts/run-tests
#                   --quick: about a minute; make test stays the whole suite)
#   make install PREFIX=/usr/local [DESTDIR=DIR]   (mk/man.mk: man pages, completion)
#   make uninstall PREFIX=/usr/local [DESTDIR=DIR]  removes what install installed
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
# CPPFLAGS and LDFLAGS: a packager's (make deb: dpkg-buildflags'), for what is installed
CPPFLAGS ?=
LDFLAGS ?=
ALL_CFLAGS := -std=gnu11 -pthread -fPIC -fvisibility=hidden $(WARN) $(CFLAGS) $(CPPFLAGS) -Ilocks -Ilocks/common \
	-Iinterpose -Istack -Imatch

# What a build was made with: objects depend on $(B)/.flags, rewritten only when
# the flags change, so that a build with other flags (make deb's) recompiles
# everything instead of mixing objects.
FLAGS_NOW := $(CC) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS)
$(shell mkdir -p $(B) && { [ "$$(cat $(B)/.flags 2>/dev/null)" = '$(FLAGS_NOW)' ] || printf '%s\n' '$(FLAGS_NOW)' >$(B)/.flags; })

# One version, the first entry of debian/changelog: the package's and
# `lockswap --version`'s.
VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
# Where an installed lockswap keeps what only it uses, under PREFIX: the
# library and compare's engine in lib/TRIPLET/lockswap (as Debian's packages
# keep preloaded libraries), the subcommands in libexec/lockswap. `lockswap`
# finds both from its own folder (../lib/TRIPLET/lockswap, ../libexec/lockswap),
# or beside itself (build/).
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
PKGLIB_REL := lib/$(if $(MULTIARCH),$(MULTIARCH)/)lockswap
LIBEXEC_REL := libexec/lockswap
LAYOUT_DEFS := -DLS_VERSION='"$(VERSION)"' -DLS_PKGLIB='"$(PKGLIB_REL)"' -DLS_LIBEXEC='"$(LIBEXEC_REL)"' 
# The shim is compiled without -fexceptions: pthread_cleanup_push in the
# condvar wait is then glibc's setjmp-based kind, which the forced unwind of
# pthread_cancel runs in C and C++ threads alike (see interpose/mutex_cond.c).
SHIM_CFLAGS := $(ALL_CFLAGS) -fasynchronous-unwind-tables

LOCK_SRCS := $(sort $(wildcard locks/*.c locks/*/*.c))
SHIM_SRCS := $(sort $(wildcard interpose/*.c profile/*.c stack/*.c match/*.c))
LOCK_OBJS := $(LOCK_SRCS:%.c=$(B)/%.o)
INJ_OBJS := $(LOCK_SRCS:%.c=$(B)/instr/%.o)
SHIM_OBJS := $(SHIM_SRCS:%.c=$(B)/%.o)
HDRS := $(wildcard locks/*.h locks/*/*.h interpose/*.h profile/*.h stack/*.h match/*.h) $(B)/.flags

UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))
# The unit programs the tests also run against the fault-injecting archive
# (NAME-inject): a twin for every one would double the build for nothing.
INJECT_UNITS := abortable_nbtimeout auto gcr hier_nomem pft_trywrlock rwstress stress tp_preempt
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/unit/%) $(INJECT_UNITS:%=$(B)/unit/%-inject)
PROG_C := $(sort $(wildcard tests/progs/*.c))
PROG_CXX := $(sort $(wildcard tests/progs/*.cpp))
PROG_BINS := $(PROG_C:tests/progs/%.c=$(B)/progs/%) $(PROG_CXX:tests/progs/%.cpp=$(B)/progs/%)

LIB := $(B)/liblockswap.so
CMD := $(B)/lockswap

.PHONY: all demo test test-quick check install uninstall deps-demo deps-test clean format format-check tests-build
all: $(LIB) $(CMD) $(B)/liblocks.a

$(B)/locks/%.o: locks/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The instrumented build of the algorithms, for stress and for stopping
# threads: LS_INJECT() becomes a random delay/yield, and LS_TEST_POINT(id) a
# call of ls_test_point() (locks/lock.h). A program that stops threads at
# test points links it with TPOINT_LINK, which sends ls_inject to a function
# that does nothing (locks/common/inject.c).
$(B)/instr/locks/%.o: locks/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DLS_FAULT_INJECT -DLS_TEST_POINTS -c $< -o $@
TPOINT_LINK = -Wl,--defsym=ls_inject=ls_inject_none -Wl,--whole-archive $(B)/liblocks-inject.a \
	-Wl,--no-whole-archive

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

# Its SONAME is its name: nothing links against it (it is preloaded by path),
# so there is no ABI version to carry.
$(LIB): $(LOCK_OBJS) $(SHIM_OBJS) interpose/liblockswap.map
	$(CC) $(LDFLAGS) -shared -pthread -o $@ $(LOCK_OBJS) $(SHIM_OBJS) -Wl,-soname,liblockswap.so \
		-Wl,--version-script=interpose/liblockswap.map -Wl,-z,now -ldl

$(CMD): scripts/cli/lockswap.c scripts/cli/cli.h $(B)/liblocks.a $(HDRS) debian/changelog
	$(CC) $(ALL_CFLAGS) $(LAYOUT_DEFS) -fvisibility=default $(LDFLAGS) -o $@ $< \
		-Wl,--whole-archive $(B)/liblocks.a -Wl,--no-whole-archive

# Unit and stress tests link the algorithms directly, without LD_PRELOAD;
# those of INJECT_UNITS also against the fault-injecting archive.
$(B)/unit/%-inject: tests/unit/%.c $(B)/liblocks-inject.a $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -Itests/unit -DLS_FAULT_INJECT -o $@ $< \
		-Wl,--whole-archive $(B)/liblocks-inject.a -Wl,--no-whole-archive
$(B)/unit/%: tests/unit/%.c $(B)/liblocks.a $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -Itests/unit -o $@ $< \
		-Wl,--whole-archive $(B)/liblocks.a -Wl,--no-whole-archive

# Test programs are ordinary pthread programs: they know nothing of lockswap.
$(B)/progs/%: tests/progs/%.c $(wildcard tests/progs/*.h)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -g -pthread $(WARN) -Wno-error=deprecated-declarations -o $@ $<

$(B)/progs/%: tests/progs/%.cpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O1 -g -pthread $(WARN) -o $@ $<

# The helpers' run limit (tests/tools/run-limit.c: timeout and env in one
# start), static: no loader at each of its thousands of starts.
$(B)/tools/run-limit: tests/tools/run-limit.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 $(WARN) -static -o $@ $<

tests-build: all $(UNIT_BINS) $(PROG_BINS) $(B)/demo-contend $(B)/tools/run-limit

-include $(sort $(wildcard mk/*.mk))

deps-test:
	@scripts/deps.sh test
deps-demo:
	@scripts/deps.sh demo

# The README's two commands. Their build runs a job per CPU (nproc), unless
# make was given -j itself: serial, the test build took 108 s of .ci/run's
# 654 on 2 CPUs (results/ci run 4), at -j2 about 56.
BUILD_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))
test: deps-test
	@$(MAKE) --no-print-directory $(BUILD_JOBS) tests-build
	@scripts/run-tests
check: test
test-quick: tests-build
	@scripts/run-tests --quick

demo: deps-demo
	@$(MAKE) --no-print-directory $(BUILD_JOBS) all $(B)/demo-contend
	@scripts/demo

$(B)/demo-contend: scripts/demo.c
	$(CC) -std=gnu11 -O2 -pthread $(WARN) -o $@ $<

# PREFIX/bin/lockswap; its subcommands (INSTALL_BINS, from mk/*.mk) in
# PREFIX/libexec/lockswap; the library (and INSTALL_LIBS: compare's engine) in
# PREFIX/lib/TRIPLET/lockswap; the man pages and the bash completion
# (mk/man.mk). DESTDIR stages it (make deb does). `make uninstall` removes
# exactly these files, and the two private folders once empty.
BINDIR ?= $(PREFIX)/bin
PKGLIBDIR ?= $(PREFIX)/$(PKGLIB_REL)
LIBEXECDIR ?= $(PREFIX)/$(LIBEXEC_REL)
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGLIBDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(BASHCOMPDIR)
	install -m 0644 $(LIB) $(DESTDIR)$(PKGLIBDIR)/liblockswap.so
	$(if $(strip $(INSTALL_LIBS)),install -m 0644 $(INSTALL_LIBS) $(DESTDIR)$(PKGLIBDIR)/)
	install -m 0755 $(CMD) $(DESTDIR)$(BINDIR)/lockswap
	$(if $(strip $(INSTALL_BINS)),install -m 0755 $(INSTALL_BINS) $(DESTDIR)$(LIBEXECDIR)/)
	install -m 0644 $(B)/man/lockswap.1 $(DESTDIR)$(MANDIR)/man1/lockswap.1
	install -m 0644 $(B)/man/lockswap.7 $(DESTDIR)$(MANDIR)/man7/lockswap.7
	install -m 0644 scripts/completion/lockswap $(DESTDIR)$(BASHCOMPDIR)/lockswap

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/lockswap $(DESTDIR)$(PKGLIBDIR)/liblockswap.so \
		$(addprefix $(DESTDIR)$(PKGLIBDIR)/,$(notdir $(INSTALL_LIBS))) \
		$(addprefix $(DESTDIR)$(LIBEXECDIR)/,$(notdir $(INSTALL_BINS))) \
		$(DESTDIR)$(MANDIR)/man1/lockswap.1 $(DESTDIR)$(MANDIR)/man7/lockswap.7 \
		$(DESTDIR)$(BASHCOMPDIR)/lockswap
	-rmdir $(DESTDIR)$(PKGLIBDIR) $(DESTDIR)$(LIBEXECDIR) 2>/dev/null

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
