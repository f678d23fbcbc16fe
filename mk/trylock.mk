# Test-point build of the algorithms (issue 9, item 4): LS_TEST_POINT(id)
# becomes a call of ls_test_point(), which the test program defines, so that
# a test can stop a thread at a named step (locks/lock.h). Only
# build/unit/trylock_handover links it: this explicit rule replaces the
# generic build/unit/% rule (no -inject twin: the test stops threads itself).

TPOINT_OBJS := $(LOCK_SRCS:%.c=$(B)/tpoint/%.o)

$(B)/tpoint/locks/%.o: locks/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DLS_TEST_POINTS -c $< -o $@

$(B)/liblocks-tpoint.a: $(TPOINT_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(B)/unit/trylock_handover: tests/unit/trylock_handover.c $(B)/liblocks-tpoint.a $(HDRS) \
		$(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -Itests/unit -DLS_TEST_POINTS -o $@ $< \
		-Wl,--whole-archive $(B)/liblocks-tpoint.a -Wl,--no-whole-archive
