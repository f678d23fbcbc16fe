# The default lock (issues 21, 33): its benchmark and the test of auto's
# regimes.
#
#   make default-bench   install missing Debian packages, build, run
#                        scripts/sweeps/bench-default into results/default/
#                        (the full run: about 20 minutes on 2 quiet cores)

.PHONY: default-bench
default-bench: deps-bench
	@$(MAKE) --no-print-directory bench-build
	@scripts/sweeps/bench-default --out results/default

# tests/unit/auto_regime.c counts a waiter's steps through the test points
# (locks/lock.h), so it links the instrumented archive (mk/trylock.mk); this
# explicit rule replaces the generic build/unit/% one.
$(B)/unit/auto_regime: tests/unit/auto_regime.c $(B)/liblocks-inject.a $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -Itests/unit -DLS_TEST_POINTS -o $@ $< \
		$(TPOINT_LINK)

# tests/unit/auto_table.c runs auto's choice under a fake clock: the test
# point build, and auto.c's calls of ls_now_ns() sent to the test's.
$(B)/unit/auto_table: tests/unit/auto_table.c $(B)/liblocks-inject.a $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -Itests/unit -DLS_TEST_POINTS -o $@ $< \
		-Wl,--wrap=ls_now_ns $(TPOINT_LINK)
