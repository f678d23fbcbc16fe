# The contention profiler's commands (issue 11): `lockswap profile` and
# `lockswap report` (interpose/profile*.c is the library side, built with
# the shim).
#
#   build/lockswap-profile   runs a program under LOCKSWAP_PROFILE=1
#   build/lockswap-report    re-renders a saved JSON profile with file:line
#   make profile-bench       regenerates results/profile/ (scripts/bench-profile)

$(B)/lockswap-profile: scripts/lockswap-profile.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g $(WARN) -o $@ $<

# The report renders with the library's own table code.
$(B)/lockswap-report: scripts/lockswap-report.c interpose/profile_table.c interpose/profile_table.h
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g $(WARN) -Iinterpose -o $@ scripts/lockswap-report.c interpose/profile_table.c

all: $(B)/lockswap-profile $(B)/lockswap-report
INSTALL_BINS += $(B)/lockswap-profile $(B)/lockswap-report
