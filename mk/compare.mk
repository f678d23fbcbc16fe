# lockswap compare (issue 13) and the matrix engine it shares with
# splash2-runner/splash2-run (issue 14): a bash program, copied into build/
# beside lockswap so that `lockswap compare` finds it, and installed with it.

# Replaced by a rename, never rewritten in place: bash reads a script as it
# runs, so a `make` during a long compare would otherwise change it under it.
$(B)/lockswap-compare: scripts/cli/lockswap-compare
	@mkdir -p $(@D)
	install -m 0755 $< $@.tmp && mv -f $@.tmp $@

all: $(B)/lockswap-compare
INSTALL_BINS += $(B)/lockswap-compare

# results/compare/: `lockswap compare --algos all` on sysbench's mutex test and
# on lockbench, and (with SPLASH2=DIR, a Splash-3 checkout) the SPLASH-2
# runner's default matrix. Under the benchmark lock; see scripts/sweeps/bench-compare.
.PHONY: compare-bench
compare-bench: deps-bench
	@$(MAKE) --no-print-directory bench-build
	@scripts/sweeps/bench-compare $(if $(SPLASH2),--splash2 "$(SPLASH2)")
