# Issue 9's measurements (scripts/sweeps/bench-glibc, results/glibc/): the cost of
# lock+unlock once a thread is asynchronously cancelable, and the try-locks'
# stalls under load.
#
#   make glibc-bench   install missing Debian packages, build, regenerate
#                      results/glibc/ (a few minutes)

$(B)/pairs-async: scripts/bench/pairs-async.c
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $<

.PHONY: glibc-bench
glibc-bench: deps-bench
	@$(MAKE) --no-print-directory all $(B)/pairs-async $(B)/unit/stress
	@scripts/sweeps/bench-glibc --out results/glibc
