# Model checking with spin(1) (Debian package `spin`): tests/model/*.pml, the
# protocols that deserve one. Not in `make test` (minutes of CPU).
#
#   make model    install spin if missing; check tests/model/gcr.pml in the
#                 configurations its header names, and that the pre-fix
#                 misuse repair (-DOLD) is still caught (exit 1 otherwise)

MODEL_GCR := -DNW=2 -DITER=1 -DMISUSE=1|-DNW=2 -DITER=1 -DMISUSE=2|-DNW=2 -DITER=2|-DNW=3 -DITER=1|-DNW=3 -DITER=1 -DMAXA=2 -DPER=1

.PHONY: model
model:
	@scripts/deps.sh model
	@set -e; d=$(B)/model; mkdir -p $$d; cp tests/model/gcr.pml $$d/; cd $$d; \
	check() { spin -a $$1 gcr.pml >/dev/null && gcc -O2 -fwrapv -DSAFETY -DCOLLAPSE -DMEMLIM=8000 -o pan pan.c && \
		./pan -m300000 >pan.out 2>&1; grep -o 'errors: [0-9]*' pan.out | tail -1; }; \
	cfgs='$(MODEL_GCR)'; IFS='|'; for c in $$cfgs; do IFS=' '; r=$$(check "$$c"); \
		echo "gcr.pml $$c: $$r"; [ "$$r" = "errors: 0" ] || exit 1; done; IFS=' '; \
	r=$$(check "-DNW=2 -DITER=1 -DMISUSE=1 -DOLD"); echo "gcr.pml -DOLD (must fail): $$r"; [ "$$r" = "errors: 1" ]
