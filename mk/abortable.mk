# AddressSanitizer builds of the stress harness and of the non-blocking
# timeout test (issue 4). Every lock is compiled with -fsanitize=address and
# fault injection, once, into an archive both programs link whole (one
# object per source, so that make compiles them in parallel); globals are
# not instrumented (--param asan-globals=0) because the ls_algos section
# must stay a packed array of pointers. What ASan can and cannot see with
# type-stable queue nodes is written in locks/abortable/abortable.h.
#
#   make asan       build/asan/stress, build/asan/abortable_nbtimeout: every lock
#
# tests/abortable.bats runs the abortable locks under ASan, and only those:
# its twins in build/asan/abortable/ link an archive of those locks
# (locks/abortable/) and what they share (locks/common/, and the cluster ids
# of locks/hier/topo.c that the harness sets up), the same objects, and the
# test build compiles no other lock for ASan (the others were 9 of the 15 s
# of CPU that ASan's compiles took). A lock that archive lacks is refused by
# name ("unknown algorithm", exit 2), so an abortable lock written elsewhere
# fails the test instead of going unchecked.

ASAN_CFLAGS := -std=gnu11 -pthread -O1 -g -fno-omit-frame-pointer -fsanitize=address --param asan-globals=0 \
	$(WARN) -Ilocks -Ilocks/common -Itests/unit -DLS_FAULT_INJECT
ASAN_OBJS := $(LOCK_SRCS:%.c=$(B)/asan/%.o)
ASAN_ABORTABLE_SRCS := $(sort $(wildcard locks/abortable/*.c locks/common/*.c) locks/hier/topo.c)
ASAN_ABORTABLE_OBJS := $(ASAN_ABORTABLE_SRCS:%.c=$(B)/asan/%.o)

$(B)/asan/locks/%.o: locks/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(ASAN_CFLAGS) -c $< -o $@

$(B)/asan/liblocks.a: $(ASAN_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(B)/asan/liblocks-abortable.a: $(ASAN_ABORTABLE_OBJS)
	@rm -f $@
	ar rcs $@ $^

# a program linked whole with the archive among its prerequisites
ASAN_LINK = mkdir -p $(@D) && $(CC) $(ASAN_CFLAGS) -o $@ $< -Wl,--whole-archive $(filter %.a,$^) -Wl,--no-whole-archive

$(B)/asan/%: tests/unit/%.c $(B)/asan/liblocks.a $(HDRS) $(wildcard tests/unit/*.h)
	$(ASAN_LINK)

$(B)/asan/abortable/%: tests/unit/%.c $(B)/asan/liblocks-abortable.a $(HDRS) $(wildcard tests/unit/*.h)
	$(ASAN_LINK)

.PHONY: asan
asan: $(B)/asan/stress $(B)/asan/abortable_nbtimeout
tests-build: $(B)/asan/abortable/stress $(B)/asan/abortable/abortable_nbtimeout
