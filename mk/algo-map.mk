# An algorithm per mutex (issue 22): the test program's variants and the
# library it loads (tests/algo-map.bats).
#
#   build/progs/algo_map                    with DWARF (-g), like every test program
#   build/algo-map/algo_map_nodebug         the same without -g: no line information
#   build/algo-map/algo_map_stripped        stripped, its DWARF in algo_map_stripped.debug
#                                           beside it (.gnu_debuglink)
#   build/algo-map/algo_map_nosyms          stripped of every symbol (as Debian's programs):
#                                           rules by MODULE+0xOFFSET
#   build/algo-map/libalgo_map_dl.so        dlopen'ed by `algo_map module`
#   build/algo-map/liblowfill.so            preloaded: no room below 4 GiB for the map's table

$(B)/algo-map/algo_map_nodebug: tests/progs/algo_map.c tests/progs/check.h
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -pthread $(WARN) -o $@ $< -ldl

$(B)/algo-map/algo_map_stripped: $(B)/progs/algo_map
	@mkdir -p $(@D)
	cp $< $@
	cd $(@D) && objcopy --only-keep-debug algo_map_stripped algo_map_stripped.debug && \
		strip --strip-debug algo_map_stripped && \
		objcopy --add-gnu-debuglink=algo_map_stripped.debug algo_map_stripped

$(B)/algo-map/algo_map_nosyms: $(B)/progs/algo_map
	@mkdir -p $(@D)
	strip --strip-all -o $@ $<

$(B)/algo-map/libalgo_map_dl.so: tests/doubles-map/algo_map_dl.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -g -pthread -fPIC -shared $(WARN) -o $@ $<

$(B)/algo-map/liblowfill.so: tests/doubles-map/lowfill.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -fPIC -shared $(WARN) -o $@ $<

tests-build: $(B)/algo-map/liblowfill.so $(B)/algo-map/algo_map_nodebug $(B)/algo-map/algo_map_stripped $(B)/algo-map/algo_map_nosyms \
	$(B)/algo-map/libalgo_map_dl.so
