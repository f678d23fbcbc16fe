# The contention profiler's commands (issue 11): `lockswap profile` and
# `lockswap report`. profile/*.c is the library side, built into
# liblockswap.so with the shim, which it sees only through
# interpose/observe.h; profile/profile_table.c (the renderings) and the
# files below it need nothing else and are linked into lockswap-report too.
#
#   build/lockswap-profile   runs a program under LOCKSWAP_PROFILE=1
#   build/lockswap-report    re-renders a saved JSON profile with file:line
#   make profile-bench       regenerates results/profile/ (scripts/sweeps/bench-profile)

$(B)/lockswap-profile: scripts/cli/lockswap-profile.c scripts/cli/cli.h
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g $(WARN) -o $@ $<

# The report renders with the library's own renderings (profile/profile_table.c
# and the files below it, profile_table.h says which), draws flame graphs
# (report_flame.c), proposes algorithm maps (report_map.c) and fetches debug
# files with elfutils' libdebuginfod.
REPORT_PROFILE := table csv json rows frames print
REPORT_SRCS := scripts/cli/lockswap-report.c scripts/cli/report_flame.c scripts/cli/report_map.c \
	$(REPORT_PROFILE:%=profile/profile_%.c) stack/elfsym.c
$(B)/lockswap-report: $(REPORT_SRCS) scripts/cli/cli.h scripts/cli/report_flame.h scripts/cli/report_map.h \
	$(REPORT_PROFILE:%=profile/profile_%.h) profile/profile_counts.h stack/elfsym.h
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g $(WARN) -Iprofile -Istack -o $@ $(REPORT_SRCS) -ldebuginfod

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
