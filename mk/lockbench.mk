# lockbench: the lock microbenchmark, its sweeps and plots (scripts/bench/lockbench.c,
# scripts/bench-*), the core benchmark (scripts/sweeps/core-bench), their test double.
#
#   make bench        install missing Debian packages, build, regenerate the
#                     reference run in results/lockbench/ (under 10 minutes)
#   make core-bench   same for the core table in results/core/
#
# lockbench and bench-pairs are ordinary pthread programs: they know nothing of
# lockswap and are built without its headers.

BENCH_CFLAGS := -std=gnu11 -O2 -g -pthread $(WARN)

# README tells users to run build/lockbench after `make`.
all: $(B)/lockbench

$(B)/lockbench: scripts/bench/lockbench.c
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $< -lm

$(B)/bench-pairs: scripts/bench/bench-pairs.c
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $<

# A broken lock for tests/lockbench.bats: every acquire and release is a no-op.
$(B)/doubles/nolock.so: tests/doubles/nolock.c
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -fPIC -shared -o $@ $<

tests-build: $(B)/lockbench $(B)/bench-pairs $(B)/doubles/nolock.so

.PHONY: bench core-bench deps-bench bench-build
deps-bench:
	@scripts/deps.sh bench

bench-build: all $(B)/lockbench $(B)/bench-pairs

bench: deps-bench
	@$(MAKE) --no-print-directory bench-build
	@scripts/sweeps/bench-sweep --out results/lockbench

core-bench: deps-bench
	@$(MAKE) --no-print-directory bench-build
	@scripts/sweeps/core-bench --out results/core
