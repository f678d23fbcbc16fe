# splash2: SPLASH-2 Raytrace and Barnes, unmodified, under glibc and lockswap's
# locks (splash2-runner/README.md). Needs your own Splash-3 checkout:
#
#   make splash2 SPLASH2=~/Splash-3                       default matrix (~10 min, 2 cores)
#   make splash2 SPLASH2=~/Splash-3 SPLASH2_ARGS="--algos all --reps 6"
#
# SPLASH2 may also come from the environment as SPLASH2_DIR.

.PHONY: splash2
splash2: all
	@if [ -z "$(SPLASH2)$(SPLASH2_DIR)" ]; then \
		echo "make splash2: give SPLASH2=DIR, your Splash-3 checkout (see splash2-runner/README.md)" >&2; exit 2; fi
	splash2-runner/splash2-run $(if $(SPLASH2),--splash2 "$(SPLASH2)") $(SPLASH2_ARGS)
