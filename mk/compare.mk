# lockswap compare (issue 13) and the matrix engine it shares with
# splash2-runner/splash2-run (issue 14): the Python package
# scripts/cli/lockswap_compare/ (standard library only, Debian's python3).
# build/lockswap-compare is its launcher, beside lockswap so that `lockswap
# compare` finds it; build/lockswap_compare.zip the package, with its bytecode.
# Installed as libexec/lockswap/lockswap-compare and lib/TRIPLET/lockswap/
# lockswap_compare.zip (beside liblockswap.so; the launcher looks there from
# its own folder, as lockswap looks for the library: the path is written
# into it here).

PYTHON3 ?= /usr/bin/python3
COMPARE_PY := $(sort $(wildcard scripts/cli/lockswap_compare/*.py))

# Both replaced by a rename, never rewritten in place: a compare that is
# running keeps reading the files it opened.
$(B)/lockswap-compare: scripts/cli/lockswap-compare Makefile
	@mkdir -p $(@D)
	sed -e '1s|^#!/usr/bin/python3 |#!$(PYTHON3) |' -e 's|@PKGLIB_REL@|$(PKGLIB_REL)|' $< >$@.tmp && \
		chmod 0755 $@.tmp && mv -f $@.tmp $@

$(B)/lockswap_compare.zip: scripts/cli/build-pyzip $(COMPARE_PY)
	@mkdir -p $(@D)
	@[ -x $(PYTHON3) ] || { echo "make: $(PYTHON3) not found: lockswap compare needs Debian's python3 (apt-get install python3, or scripts/deps.sh demo)" >&2; exit 2; }
	$(PYTHON3) scripts/cli/build-pyzip $@ $(PYTHON3) scripts/cli/lockswap_compare

all: $(B)/lockswap-compare $(B)/lockswap_compare.zip
INSTALL_BINS += $(B)/lockswap-compare
INSTALL_LIBS += $(B)/lockswap_compare.zip

# results/compare/: `lockswap compare --algos all` on sysbench's mutex test and
# on lockbench, and (with SPLASH2=DIR, a Splash-3 checkout) the SPLASH-2
# runner's default matrix. Under the benchmark lock; see scripts/sweeps/bench-compare.
.PHONY: compare-bench compare-startup
compare-bench: deps-bench
	@$(MAKE) --no-print-directory bench-build
	@scripts/sweeps/bench-compare $(if $(SPLASH2),--splash2 "$(SPLASH2)")

# results/compare/startup/: the start-up of `lockswap compare`, the bash engine
# it replaced against this one (scripts/sweeps/bench-compare-startup).
compare-startup: all
	@scripts/sweeps/bench-compare-startup
