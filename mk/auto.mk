# auto: the adaptive lock's benchmark (issue 13; scripts/sweeps/bench-auto).
#
#   make auto-bench   install missing Debian packages, build, regenerate
#                     results/auto/ (about 15 minutes on 2 cores)

.PHONY: auto-bench
auto-bench: deps-bench deps-test
	@$(MAKE) --no-print-directory bench-build tests-build $(B)/demo-contend
	@scripts/sweeps/bench-auto --out results/auto
