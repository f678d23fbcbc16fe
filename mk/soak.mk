# The soak test of locks that are never destroyed (issue 30): build/soak, a
# cache that keeps making and deleting C++ locks (scripts/bench/soak.cpp),
# under every lock for ten minutes each (scripts/sweeps/soak --help).
#
#   make soak         build, then regenerate results/soak/ (every mutex
#                     algorithm and NAME+gcr beside the rwlock algorithms,
#                     10 minutes, every run at once at nice 19)

.PHONY: soak soak-build

$(B)/soak: scripts/bench/soak.cpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g -pthread $(WARN) -o $@ $<

soak-build: all $(B)/soak

tests-build: $(B)/soak

soak: soak-build
	@scripts/sweeps/soak --out results/soak
