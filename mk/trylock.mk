# Programs that stop threads at test points (issue 9, item 4): LS_TEST_POINT(id)
# calls ls_test_point(), which the test program defines, so that a test can
# stop a thread at a named step (locks/lock.h). They link the instrumented
# archive with TPOINT_LINK (the Makefile: its LS_INJECT() then does
# nothing); explicit rules replace the generic build/unit/% rule (no -inject
# twin: the test stops threads itself). Here trylock_handover; others in
# mk/default.mk, mk/fork.mk and mk/unlock.mk.

$(B)/unit/trylock_handover: tests/unit/trylock_handover.c $(B)/liblocks-inject.a $(HDRS) \
		$(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -Itests/unit -DLS_TEST_POINTS -o $@ $< \
		$(TPOINT_LINK)
