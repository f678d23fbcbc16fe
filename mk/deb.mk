# make deb (issue 23, item 4): the Debian package, built by Debian's own
# tools (dpkg-buildpackage running debian/rules, debhelper). It packages what
# `make install PREFIX=/usr` installs, built in build/ (see debian/rules);
# the .deb, its -dbgsym .ddeb, .buildinfo and .changes go to build/deb/,
# and debian/ is cleaned afterwards.
DEB_DIR := $(B)/deb

.PHONY: deb
deb:
	@mkdir -p $(DEB_DIR)
	rm -f $(DEB_DIR)/*.deb $(DEB_DIR)/*.ddeb $(DEB_DIR)/*.buildinfo $(DEB_DIR)/*.changes
	LOCKSWAP_DEB_DIR=$(abspath $(DEB_DIR)) dpkg-buildpackage -b -us -uc -tc \
		--buildinfo-option=-u$(abspath $(DEB_DIR)) --buildinfo-file=$(abspath $(DEB_DIR))/lockswap.buildinfo \
		--changes-option=-u$(abspath $(DEB_DIR)) --changes-file=$(abspath $(DEB_DIR))/lockswap.changes
	@ls $(DEB_DIR)/*.deb
