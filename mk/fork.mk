# fork() while a waiter is stopped in the window after it made itself
# visible to the lock (issue 31): built against the instrumented archive
# (mk/trylock.mk), where LS_TEST_POINT(id) calls the test's ls_test_point();
# the explicit rule replaces the generic build/unit/% rule (no -inject twin).

$(B)/unit/fork_window: tests/unit/fork_window.c $(B)/liblocks-inject.a $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -Itests/unit -DLS_TEST_POINTS -o $@ $< \
		$(TPOINT_LINK)
