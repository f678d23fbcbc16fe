# The lockswap command's own test programs (tests/lockswap-cmd.bats): a
# statically linked one, into which the loader preloads nothing (lockswap
# warns before running it).

$(B)/static/hello: tests/progs/hello.c tests/progs/check.h
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -pthread $(WARN) -static -o $@ $<

tests-build: $(B)/static/hello
