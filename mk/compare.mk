# lockswap compare (issue 13) and the matrix engine it shares with
# splash2-runner/splash2-run (issue 14): a bash program, copied into build/
# beside lockswap so that `lockswap compare` finds it, and installed with it.

$(B)/lockswap-compare: scripts/lockswap-compare
	@mkdir -p $(@D)
	install -m 0755 $< $@

all: $(B)/lockswap-compare
INSTALL_BINS += $(B)/lockswap-compare
