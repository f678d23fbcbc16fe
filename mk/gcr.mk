# Generic concurrency restriction (issue 20): its targets measured.
#
#   make bench-gcr    install missing Debian packages, build, regenerate
#                     results/gcr/ (scripts/sweeps/bench-gcr --help; about 30
#                     minutes on 2 quiet cores)

.PHONY: bench-gcr
bench-gcr: deps-bench
	@$(MAKE) --no-print-directory bench-build $(B)/demo-contend
	@scripts/sweeps/bench-gcr --out results/gcr
