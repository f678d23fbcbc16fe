# Test programs and doubles of the core end-to-end tests (tests/*.bats of
# issue 2) that are linked differently from tests/progs/*.

# A library whose constructor uses mutexes, and the program depending on it
# (an explicit rule, so it replaces the generic tests/progs rule).
$(B)/doubles-core/libearly.so: tests/doubles-core/early_lib.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -g -pthread -fPIC -shared $(WARN) -o $@ $<

$(B)/progs/early: tests/progs/early.c tests/progs/check.h $(B)/doubles-core/libearly.so
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -g -pthread $(WARN) -o $@ $< -L$(B)/doubles-core -learly \
		-Wl,-rpath,'$$ORIGIN/../doubles-core'

# Deliberately broken pthread doubles: the tests check that they fail.
$(B)/doubles-core/broken.so: tests/doubles-core/broken.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -g -pthread -fPIC -shared $(WARN) -o $@ $< -ldl

tests-build: $(B)/doubles-core/libearly.so $(B)/doubles-core/broken.so $(B)/progs/early
