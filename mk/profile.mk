# The contention profiler's commands (issue 11): `lockswap profile` and
# `lockswap report`. profile/*.c is the library side, built into
# liblockswap.so with the shim, which it sees only through
# interpose/observe.h; profile/profile_table.c (the renderings) and the
# files below it need nothing else and are linked into lockswap-report too.
#
#   build/lockswap-profile   runs a program under LOCKSWAP_PROFILE=1
#   build/lockswap-report    re-renders a saved JSON profile with file:line
#   make profile-bench       regenerates results/profile/ (scripts/sweeps/bench-profile)

$(B)/lockswap-profile: scripts/cli/lockswap-profile.c scripts/cli/cli.h $(B)/.flags
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS) -o $@ $<

# The report renders with the library's own renderings (profile/profile_table.c
# and the files below it, profile_table.h says which), draws flame graphs
# (report_flame.c), proposes algorithm maps (report_map.c), and names frames
# with the library's symbol resolver (stack/elfsym.c, through report_syms.c,
# which fetches debug files with elfutils' libdebuginfod, bounded).
REPORT_PROFILE := table csv json rows frames print
REPORT_SRCS := scripts/cli/lockswap-report.c scripts/cli/report_flame.c scripts/cli/report_map.c \
	scripts/cli/report_syms.c $(REPORT_PROFILE:%=profile/profile_%.c) stack/elfsym.c
$(B)/lockswap-report: $(REPORT_SRCS) scripts/cli/cli.h scripts/cli/report_flame.h scripts/cli/report_map.h \
	scripts/cli/report_syms.h $(REPORT_PROFILE:%=profile/profile_%.h) profile/profile_counts.h stack/elfsym.h locks/lock.h $(B)/.flags
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) $(CPPFLAGS) -Iprofile -Istack -Ilocks $(LDFLAGS) -o $@ $(REPORT_SRCS) \
		-ldebuginfod -lm

all: $(B)/lockswap-profile $(B)/lockswap-report
INSTALL_BINS += $(B)/lockswap-profile $(B)/lockswap-report

# dlopen while contended (tests/profile.bats): the program exports its mutex
# (-rdynamic) to the library it loads and unloads.
$(B)/progs/profile_dl: tests/progs/profile_dl.c tests/progs/check.h
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -g -pthread $(WARN) -rdynamic -o $@ $< -ldl

$(B)/doubles-profile/libprofile_dl.so: tests/doubles-profile/profile_dl_lib.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -g -pthread -fPIC -shared $(WARN) -o $@ $<

tests-build: $(B)/progs/profile_dl $(B)/doubles-profile/libprofile_dl.so

.PHONY: profile-bench
profile-bench: deps-bench
	@$(MAKE) --no-print-directory bench-build tests-build
	@scripts/sweeps/bench-profile --out results/profile

# The names lockswap prints (tests/report.bats): a program and a library that
# export a few functions around code they do not export, stripped as Debian
# ships them (only their exported functions left, in .dynsym), their debug
# files apart in build/symbols/debug/ (objcopy --only-keep-debug, as
# dh_strip does); the program finds the library beside it ($ORIGIN).
SYMBOLS_CFLAGS := -std=gnu11 -O1 -g -pthread $(WARN) -fno-toplevel-reorder -fno-reorder-functions

$(B)/symbols/libsymbols.so: tests/doubles-report/symbols_lib.c
	@mkdir -p $(@D)/debug
	$(CC) $(SYMBOLS_CFLAGS) -fPIC -shared -fvisibility=hidden -o $@.full $<
	objcopy --only-keep-debug $@.full $(@D)/debug/libsymbols.so.debug
	strip --strip-all -o $@ $@.full
	rm -f $@.full

$(B)/symbols/symbols: tests/doubles-report/symbols.c tests/progs/check.h $(B)/symbols/libsymbols.so
	@mkdir -p $(@D)/debug
	$(CC) $(SYMBOLS_CFLAGS) -Itests/progs -o $@.full $< -L$(@D) -lsymbols -Wl,-rpath,'$$ORIGIN' \
		-Wl,--export-dynamic-symbol='sym_exported_*'
	objcopy --only-keep-debug $@.full $(@D)/debug/symbols.debug
	strip --strip-all -o $@ $@.full
	rm -f $@.full

tests-build: $(B)/symbols/symbols
