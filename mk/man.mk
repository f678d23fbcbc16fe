# Man pages and shell completion (issue 23, item 3): lockswap(1), written by
# hand (man/lockswap.1), and lockswap(7), whose ALGORITHMS section is made
# here from `lockswap --list --long`, so that a new algorithm or tunable is in the
# page without an edit. `make install` installs both and
# scripts/completion/lockswap; tests/install.bats keeps them in step.

MAN_PAGES := $(B)/man/lockswap.1 $(B)/man/lockswap.7

$(B)/man/lockswap.1: man/lockswap.1
	@mkdir -p $(@D)
	cp $< $@

$(B)/man/lockswap.7: man/lockswap.7.in man/algorithms.awk $(CMD)
	@mkdir -p $(@D)
	$(CMD) --list --long | awk -f man/algorithms.awk >$@.algorithms
	awk -v f=$@.algorithms '$$0 == "@ALGORITHMS@" { while ((getline l <f) > 0) print l; next } { print }' \
		man/lockswap.7.in >$@.tmp
	rm -f $@.algorithms
	mv -f $@.tmp $@

all: $(MAN_PAGES)
