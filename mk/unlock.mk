# The unlock tests (issues 25 and 26): built against the instrumented archive
# (mk/trylock.mk), where LS_TEST_POINT(id) calls the test's ls_test_point():
# explicit rules replace the generic build/unit/% rule (no -inject twin: the
# tests stop threads themselves).

$(B)/unit/after_release: tests/unit/after_release.c $(B)/liblocks-inject.a $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -Itests/unit -DLS_TEST_POINTS -o $@ $< \
		$(TPOINT_LINK)

$(B)/unit/unlock_misuse: tests/unit/unlock_misuse.c $(B)/liblocks-inject.a $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -Itests/unit -DLS_TEST_POINTS -o $@ $< \
		$(TPOINT_LINK)

$(B)/unit/cna_scan: tests/unit/cna_scan.c $(B)/liblocks-inject.a $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -Itests/unit -DLS_TEST_POINTS -o $@ $< \
		$(TPOINT_LINK)

$(B)/unit/ext_reclaim: tests/unit/ext_reclaim.c $(B)/liblocks-inject.a $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -Itests/unit -DLS_TEST_POINTS -o $@ $< \
		$(TPOINT_LINK)
