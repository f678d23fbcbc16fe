# AddressSanitizer builds of the stress harness and of the non-blocking
# timeout test, for tests/abortable.bats (issue 4). Every lock is compiled
# from source with -fsanitize=address and fault injection; globals are not
# instrumented (--param asan-globals=0) because the ls_algos section must
# stay a packed array of pointers. What ASan can and cannot see with
# type-stable queue nodes is written in locks/abortable/abortable.h.
#
#   make asan       build/asan/stress, build/asan/abortable_nbtimeout

ASAN_CFLAGS := -std=gnu11 -pthread -O1 -g -fno-omit-frame-pointer -fsanitize=address --param asan-globals=0 \
	$(WARN) -Ilocks -Ilocks/common -Itests/unit -DLS_FAULT_INJECT

$(B)/asan/%: tests/unit/%.c $(LOCK_SRCS) $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(ASAN_CFLAGS) -o $@ $< $(LOCK_SRCS)

.PHONY: asan
asan: $(B)/asan/stress $(B)/asan/abortable_nbtimeout
tests-build: asan
