# man/algorithms.awk - the ALGORITHMS entries of lockswap(7), in man(7)
# macros, from `lockswap --list --long` on stdin (mk/man.mk). An algorithm line is
# "NAME CAPABILITIES DESCRIPTION" (capabilities comma-separated, "-" for
# none); its tunables follow, indented, as "LOCKSWAP_X=DEFAULT: what".
# Other lines (the heading, the notes at the end) are not entries.

# text for roff: backslashes, hyphens (ASCII in every output), and a '.' or
# a "'" at the start of a line
function roff(s) {
  gsub(/\\/, "\\e", s)
  gsub(/-/, "\\-", s)
  sub(/^[.']/, "\\\\\\&&", s)
  return s
}

/^NAME +CAPABILITIES/ { next }

function close_tunables() {
  if (inrs)
    print ".RE"
  inrs = 0
}

/^[a-z0-9][-a-z0-9+_.:]* +[-a-z,]+ / {
  close_tunables()
  name = $1; caps = $2
  gsub(/,/, ", ", caps)
  desc = $0
  sub(/^[^ ]+ +[^ ]+ +/, "", desc)
  print ".TP"
  print ".B " roff(name)
  print roff(desc) "."
  print ".br"
  print "Capabilities: " (caps == "-" ? "none" : roff(caps)) "."
  n++
  next
}

# A wrapper, "+NAME DESCRIPTION" (the wrappers' section of --list): its
# entry is NAME+WRAPPER, its tunables follow as an algorithm's.
/^\+[a-z0-9][-a-z0-9_.]* / {
  close_tunables()
  desc = $0
  sub(/^[^ ]+ +/, "", desc)
  print ".TP"
  print ".B " roff("NAME" $1)
  print roff(desc) "."
  print ".br"
  print "Capabilities: those of NAME, but fifo."
  next
}

# An rwlock algorithm's own policy (LOCKSWAP_RWPOLICY=algorithm).
/^ +policy: / {
  close_tunables()
  line = $0
  sub(/^ +policy: */, "", line)
  print ".br"
  print "Own policy (LOCKSWAP_RWPOLICY=algorithm): " roff(line) "."
  next
}

/^ +LOCKSWAP_[A-Z0-9_]+=/ {
  line = $0
  sub(/^ +/, "", line)
  var = line; sub(/=.*/, "", var)
  def = line; sub(/^[^=]*=/, "", def); sub(/:.*/, "", def)
  what = line; sub(/^[^:]*: */, "", what)
  if (!inrs)
    print ".RS"
  inrs = 1
  print ".TP"
  print ".BR " roff(var) " \" (default " roff(def) ")\""
  print roff(what) "."
  next
}

END {
  close_tunables()
  if (!n) {
    print "man/algorithms.awk: no algorithm in the list" > "/dev/stderr"
    exit 1
  }
}
