# The reader-writer locks' and spinlocks' benchmark (issue 19, item 5;
# scripts/sweeps/bench-rwlock, results/rwlock/).
#
#   make rwlock-bench   install missing Debian packages, build, regenerate
#                       results/rwlock/ (scripts/sweeps/bench-rwlock --help)
#
# evp-fetch is the real program: EVP_MD_fetch from many threads against
# Debian's libcrypto.so.3 (libssl-dev, a bench dependency only).

$(B)/evp-fetch: scripts/bench/evp-fetch.c
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $< -lcrypto

.PHONY: rwlock-bench
rwlock-bench: deps-bench
	@$(MAKE) --no-print-directory bench-build $(B)/evp-fetch
	@scripts/sweeps/bench-rwlock --out results/rwlock
