# The hierarchical locks (issue 10): their benchmark on simulated clusters.
#
#   make bench-hier   install missing Debian packages, build, regenerate
#                     results/hier/ (scripts/sweeps/bench-hier --help; ~15 minutes
#                     on 2 quiet cores)

.PHONY: bench-hier
bench-hier: deps-bench
	@$(MAKE) --no-print-directory bench-build $(B)/progs/hello
	@scripts/sweeps/bench-hier --out results/hier
