#!/usr/bin/env bats
# Where users get lockswap (issue 23, items 3 and 4; issue 34): the man pages
# lockswap(1) and lockswap(7), kept in step with the commands' --help and
# with `lockswap --list --long`, and lockswap(7)'s schema of the profile's
# JSON; the bash completion, hermetic (a PATH of the test's own); `make
# install` (PREFIX, DESTDIR: the library with its SONAME in a private
# folder, the subcommands in libexec) and `make uninstall`; the flags a
# build is made with; and `make deb`, the Debian package, installed into a
# fresh root with dpkg and run from there, and clean for lintian (when it is
# installed: scripts/deps.sh test installs it).
bats_require_minimum_version 1.5.0
load helpers
TEST_TIMEOUT=120
MAN1="$B/man/lockswap.1"
MAN7="$B/man/lockswap.7"

setup() {
  T=$(mktemp -d)
  QUERIES=() WANTS=()
}

teardown() {
  rm -rf "$T"
}

# deb_built: `make deb` has built the package, once for the file (the
# first test that needs it builds it; its output is in deb.log): into the
# file's own folder, not build/deb (another test file may run beside this
# one); the package's build tree is build/pkg (debian/rules)
deb_built() {
  command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
    { echo "dpkg-dev and debhelper are needed (scripts/deps.sh test)"; return 1; }
  local d=$BATS_FILE_TMPDIR rc
  if [ ! -f "$d/deb.status" ]; then
    rc=0
    timeout -k 5 "$(hang_timeout)" make -C "$ROOT" --no-print-directory deb DEB_DIR="$d/deb" >"$d/deb.log" 2>&1 || rc=$?
    echo "$rc" >"$d/deb.status"
  fi
  [ "$(cat "$d/deb.status")" = 0 ] || { echo "make deb failed (exit $(cat "$d/deb.status")):"; tail -n 40 "$d/deb.log"; return 1; }
}

# text PAGE: the page as plain text, one paragraph per line as far as
# possible (no hyphenation, very long lines)
text() {
  groff -man -Tascii -rHY=0 -rLL=1000n -P-cbou "$1"
}

@test "lockswap(7) has every algorithm, its capabilities and tunables as lockswap --list prints them, and every LOCKSWAP_ variable the library accepts; groff has nothing to warn about" {
  # (the page matched by the shell itself: no process per name)
  local page missing=() name caps v long re
  page=$'\n'$(text "$MAN7")$'\n'
  long=$("$LOCKSWAP" --list --long)
  while read -r name caps _; do
    re=$'\n'" +${name//+/\\+}"$'( |\n)'
    [[ "$page" =~ $re ]] || missing+=("algorithm $name")
    [ "$caps" = - ] && caps=none
    [[ "$page" == *"Capabilities: ${caps//,/, }."* ]] || missing+=("capabilities $caps of $name")
  done < <(grep -E '^[a-z0-9]' <<<"$long" | grep -v '^waiting policies')
  while read -r v; do
    [[ "$page" == *"${v%%=*} (default ${v#*=})"* ]] || missing+=("tunable $v")
  done < <(grep -oE '^ +LOCKSWAP_[A-Z0-9_]+=[0-9]+' <<<"$long" | sed 's/^ *//' | sort -u)
  # every LOCKSWAP_ name the library holds: its own variables, every
  # option and every tunable are strings in it (its message for an unknown
  # variable, which this test read them from, lists them no longer: it
  # points to lockswap(7), and the loop checked nothing)
  run --separate-stderr env LD_PRELOAD="$LIB" LOCKSWAP_NO_SUCH_VARIABLE=1 "$PROGS/hello"
  [ "$status" -eq 2 ]
  local vars
  vars=$(grep -aoE 'LOCKSWAP_[A-Z0-9_]+' "$LIB" | sort -u)
  [ "$(wc -l <<<"$vars")" -ge 40 ] || { echo "only these LOCKSWAP_ names in $LIB: $vars"; return 1; }
  for v in $vars; do
    re="(^|[^A-Za-z0-9_])$v([^A-Za-z0-9_]|\$)"
    [[ "$page" =~ $re ]] || missing+=("variable $v")
  done
  [ ${#missing[@]} -eq 0 ] || { printf 'not in lockswap(7): %s\n' "${missing[@]}"; return 1; }
  for name in spin yield park "KNOWN LIMITS" "WHAT GOES TO GLIBC"; do
    [[ "$page" == *"$name"* ]] || { echo "no $name"; return 1; }
  done
  run groff -man -Tutf8 -ww -z "$MAN7"
  assert_success
  assert_output ""
}

@test "lockswap(7) documents the profile's JSON: every member of a real profile (mutexes, condvars, rwlocks, spinlocks, an algorithm map) is in the schema with its type, and every member it says is always there is" {
  timeout -k 5 60 "$LOCKSWAP" profile -m 'rw_n=central,*=mcs' -r pf-t --spinalgo ticket16 --top 0 -o "$T/p.json" -- \
    "$PROGS/profile" rwlock spin counts >/dev/null
  text "$MAN7" >"$T/page"
  run /usr/bin/python3 - "$T/page" "$T/p.json" <<'EOF'
import json, re, sys

page = open(sys.argv[1]).read()
part = page.split("The profile's JSON", 1)[1].split("ALGORITHM MAPS", 1)[0]
# the objects' paragraphs, by their headings
heads = [("top", "The profile:"), ("frame", "A frame:"), ("lock", "A lock (the items of"),
         ("cond", "A condition variable (the items of"), ("site", "A site (the items of")]
schema = {}
for i, (name, head) in enumerate(heads):
    start = part.index(head)
    end = part.index(heads[i + 1][1]) if i + 1 < len(heads) else len(part)
    members = {}
    for names, typ, when in re.findall(r"^ +([a-z_]+(?:, [a-z_]+)*) \(([a-z ]+), ([a-z ]+)\)$", part[start:end], re.M):
        for n in names.split(", "):
            members[n] = (typ, when)
    schema[name] = members
# a condition variable's members that are a lock's
shared = re.search(r"A condition variable \(the items of condvars\): ([a-z_, ]+) as a lock's", part).group(1)
for n in shared.split(", "):
    schema["cond"][n] = schema["lock"][n]
assert all(schema.values()), schema


def typed(v, typ):
    if typ == "integer":
        return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** 64
    if typ == "string":
        return isinstance(v, str)
    if typ == "boolean":
        return isinstance(v, bool)
    if typ == "array of integers":
        return isinstance(v, list) and all(typed(x, "integer") for x in v)
    return isinstance(v, list)  # arrays of objects: their items are checked as such


bad = []


def check(obj, kind, where, family=None):
    for k, v in obj.items():
        if k not in schema[kind]:
            bad.append("%s: %s is not in lockswap(7)" % (where, k))
        elif not typed(v, schema[kind][k][0]):
            bad.append("%s: %s is not a %s: %r" % (where, k, schema[kind][k][0], v))
    for k, (typ, when) in schema[kind].items():
        needed = when == "always" or (when == "rwlocks" and family == "rwlocks") or \
            (when == "mutexes and spinlocks" and family in ("mutexes", "spinlocks"))
        if needed and k not in obj:
            bad.append("%s: %s (%s) is missing" % (where, k, when))
        if k in obj and when in ("rwlocks", "mutexes and spinlocks") and not needed:
            bad.append("%s: %s is only for %s" % (where, k, when))


p = json.load(open(sys.argv[2]))
check(p, "top", "profile")
for i, s in enumerate(p["stacks"]):
    for f in s:
        check(f, "frame", "stack %d" % i)
seen = set()
for family in ("mutexes", "rwlocks", "spinlocks"):
    for r in p[family]:
        check(r, "lock", "%s #%d" % (family, r["id"]), family)
        seen |= set(r)
        for s in r["sites"]:
            check(s, "site", "%s #%d site" % (family, r["id"]), family)
            seen |= {"site." + k for k in s}
for r in p["condvars"]:
    check(r, "cond", "condvar #%d" % r["id"])
# the profile has what the schema describes: every kind, a map, reads' sites
assert p["mutexes"] and p["rwlocks"] and p["spinlocks"] and p["condvars"], "a kind of lock is missing"
for k in ("algorithm", "rule", "stack", "read_wait_ns", "wrlock", "lock", "site.mode"):
    assert k in seen, "the profile has no " + k
print("\n".join(bad) or "ok")
EOF
  assert_success
  assert_output ok
}

@test "lockswap(7)'s algorithms come from lockswap --list --long when it is built: an algorithm and a tunable added to the list are in the page, with no edit of the page" {
  # the rule of mk/man.mk, with a list that has one more algorithm
  { "$LOCKSWAP" --list --long | sed '/^$/,$d'
    echo 'rw-mcs+gcr fifo,rw      a reader-writer lock - wrapped (for this test)'
    echo '                                      LOCKSWAP_GCR_TEST=7: .starts with a dot \ and a backslash'
  } | awk -f "$ROOT/man/algorithms.awk" >"$T/algos"
  awk -v f="$T/algos" '$0 == "@ALGORITHMS@" { while ((getline l <f) > 0) print l; next } { print }' \
    "$ROOT/man/lockswap.7.in" >"$T/lockswap.7"
  run text "$T/lockswap.7"
  assert_success
  assert_line --regexp '^ +rw-mcs\+gcr$'
  assert_line --partial "a reader-writer lock - wrapped (for this test)."
  assert_line --partial "Capabilities: fifo, rw."
  assert_line --partial "LOCKSWAP_GCR_TEST (default 7)"
  assert_line --partial ".starts with a dot \\ and a backslash."
  # and the built page is that rule's output for the real list
  grep -q '^@ALGORITHMS@' "$MAN7" && return 1
  "$LOCKSWAP" --list --long | awk -f "$ROOT/man/algorithms.awk" >"$T/real"
  awk -v f="$T/real" '$0 == "@ALGORITHMS@" { while ((getline l <f) > 0) print l; next } { print }' \
    "$ROOT/man/lockswap.7.in" | cmp - "$MAN7"
}

@test "lockswap(1) documents every option of lockswap, compare, profile and report (as their --help prints them); groff has nothing to warn about" {
  # (the page matched by the shell itself: no process per option)
  local page sub opt missing=() re
  page=$'\n'$(text "$MAN1")
  for sub in "" compare profile report; do
    # shellcheck disable=SC2086
    for opt in $("$LOCKSWAP" $sub --help | grep -oE -- '(^|[[:space:],[])--?[a-zA-Z][-a-zA-Z]*' | sed -E 's/^[[:space:],[]//' | sort -u); do
      re="[^-a-zA-Z]$opt([^-a-zA-Z]|\$)"
      [[ "$page" =~ $re ]] || missing+=("lockswap $sub $opt")
    done
    [ -z "$sub" ] || [[ "$page" == *$'\n'"LOCKSWAP ${sub^^}"* ]] || missing+=("section LOCKSWAP ${sub^^}")
  done
  [ ${#missing[@]} -eq 0 ] || { printf 'not in lockswap(1): %s\n' "${missing[@]}"; return 1; }
  run groff -man -Tutf8 -ww -z "$MAN1"
  assert_success
  assert_output ""
}

# Completion queries, run in one bash (loading bash-completion costs more
# than a completion): `expect WANT WORD...` and `expect_has WANT WORD...`
# add one, `check_expected` runs those added and fails naming each whose
# completion was not WANT (every word followed by a space: "a b ") or, for
# expect_has, did not offer every word of WANT.
expect() {
  local w q=
  for w in "${@:2}"; do q+="$w"$'\x1f'; done
  QUERIES+=("$q") WANTS+=("$1")
}
expect_has() {
  expect "~$1" "${@:2}"
}

# completions QUERY...: for each query (its words, each followed by \x1f;
# the last word may be ""), one line: what bash completes for the last word,
# with bash-completion loaded as an interactive shell has it, and a PATH of
# the test's own ($T/path: the programs a test puts there, nothing else), in
# $T (the current folder, for file names), sorted, each word followed by a
# space. The words go out as "QUERY-NUMBER<tab>WORD" lines, sorted and
# joined once for all the queries (not three programs per query).
completions() {
  mkdir -p "$T/path"
  (cd "$T" && bash -c '
    source /usr/share/bash-completion/bash_completion
    source "$0"
    PATH=$1; shift
    n=0
    printf -v sep "\x1f"
    for q in "$@"; do
      COMP_WORDS=()
      while [ -n "$q" ]; do COMP_WORDS+=("${q%%"$sep"*}"); q=${q#*"$sep"}; done
      COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
      COMPREPLY=()
      _lockswap 2>/dev/null
      for w in "${COMPREPLY[@]}"; do
        [ -z "$w" ] || printf "%d\t%s\n" "$n" "$w"
      done
      n=$((n + 1))
    done' "$ROOT/scripts/completion/lockswap" "$T/path" "$@") |
    sort -t $'\t' -k1,1n -k2 -u |
    awk -F '\t' -v n=$# '{ s[$1] = s[$1] $2 " " } END { for (i = 0; i < n; i++) print s[i] }'
}

check_expected() {
  local got=() i bad=0 q w
  mapfile -t got < <(completions "${QUERIES[@]}")
  [ ${#got[@]} -eq ${#QUERIES[@]} ] || { echo "${#got[@]} answers to ${#QUERIES[@]} queries"; return 1; }
  for i in "${!QUERIES[@]}"; do
    q=${QUERIES[i]//$'\x1f'/ }
    if [[ ${WANTS[i]} == "~"* ]]; then
      for w in ${WANTS[i]#"~"}; do
        [[ " ${got[i]}" == *" $w "* ]] || { echo "completing '$q': $w not offered: '${got[i]}'"; bad=1; }
      done
    elif [ "${got[i]}" != "${WANTS[i]}" ]; then
      echo "completing '$q': got '${got[i]}', want '${WANTS[i]}'"
      bad=1
    fi
  done
  QUERIES=() WANTS=()
  return $bad
}

@test "bash completion: subcommands, algorithm names from lockswap --names, every option from each --help, keyword values, lists, files, and the program after --" {
  [ -r /usr/share/bash-completion/bash_completion ] || { echo "bash-completion is not installed (scripts/deps.sh test)"; return 1; }
  local names sub opts
  names=$("$LOCKSWAP" --names | grep '^mcs' | sort | tr '\n' ' ')
  expect "$names" "$LOCKSWAP" -a mcs
  expect "c-tkt-tkt " "$LOCKSWAP" --algo c-t
  expect "report " "$LOCKSWAP" rep
  expect_has compare "$LOCKSWAP" com
  expect "--list " "$LOCKSWAP" --li
  expect "park spin yield " "$LOCKSWAP" -w ""
  expect "fifo " "$LOCKSWAP" --names --cap f
  expect "--folded " "$LOCKSWAP" report --fo
  expect "contended hold wait " "$LOCKSWAP" report --weight ""
  expect "acquisitions " "$LOCKSWAP" report --sort a
  expect "$ROOT/tests/data/report-synthetic.json " "$LOCKSWAP" report "$ROOT/tests/data/report-syn"
  expect "--sample " "$LOCKSWAP" profile --sam
  expect "--higher-is-better " "$LOCKSWAP" compare --higher
  expect "tas,clh-tp tas,clh-try " "$LOCKSWAP" compare --algos tas,clh-t
  expect "mcs/yield " "$LOCKSWAP" compare --algos mcs/y
  expect "spin,park " "$LOCKSWAP" compare --wait spin,pa
  expect "central,pf-t+bravo " "$LOCKSWAP" compare --rwalgos central,pf-t+
  # the program: after --, or the first operand, completed as a command
  expect "$ROOT/scripts/run-tests " "$LOCKSWAP" -a mcs -- "$ROOT/scripts/run-te"
  expect "$ROOT/scripts/run-tests " "$LOCKSWAP" -a mcs "$ROOT/scripts/run-te"
  # every option of every command is offered
  for sub in "" compare profile report; do
    # shellcheck disable=SC2086
    opts=$("$LOCKSWAP" $sub --help | grep -oE -- '(^|[[:space:],[])--?[a-zA-Z][-a-zA-Z]*' | sed -E 's/^[[:space:],[]//' | sort -u)
    [ -n "$opts" ] || { echo "lockswap $sub --help names no option"; return 1; }
    # shellcheck disable=SC2086
    expect_has "$opts" "$LOCKSWAP" $sub -
  done
  check_expected
}

@test "bash completion is hermetic: the first word offers the subcommands and the programs of the PATH it is given, whatever the machine has" {
  expect "report " "$LOCKSWAP" rep
  check_expected
  # a program of that name on PATH (mariadb-client's /usr/bin/replace)
  printf '#!/bin/sh\n' >"$T/path/replace"
  chmod +x "$T/path/replace"
  expect "replace report " "$LOCKSWAP" rep
  expect "replace " "$LOCKSWAP" -a mcs -- rep
  check_expected
}

@test "bash completion: a value for every option that takes one: names, keywords, a rule's algorithm, wrappers, capabilities of the family named, files and folders where one is expected, nothing where a number or a pattern is" {
  touch "$T/zz-file"
  mkdir "$T/zz-dir"
  expect "cache_get=mcs-tp cache_get=mcs-try " "$LOCKSWAP" -m 'cache_get=mcs-t'
  expect "a=ttas,rw_get=pf-t+bravo " "$LOCKSWAP" --map 'a=ttas,rw_get=pf-t+b'
  expect "zz-dir zz-file " "$LOCKSWAP" --config zz
  expect "pf-t pf-t+bravo " "$LOCKSWAP" -r pf-t
  expect "ticket16 " "$LOCKSWAP" --spinalgo ticket1
  expect "exclusive " "$LOCKSWAP" --names rwlock --cap ex
  expect "" "$LOCKSWAP" --names --cap ex
  expect "gcr " "$LOCKSWAP" --names --wrap g
  expect "table " "$LOCKSWAP" --topology = t
  expect "zz-dir zz-file " "$LOCKSWAP" profile -o zz
  expect "auto " "$LOCKSWAP" compare --per-lock a
  expect "mutexee " "$LOCKSWAP" compare --rest mutexe
  expect "zz-dir " "$LOCKSWAP" compare --out zz
  expect "stdout " "$LOCKSWAP" compare --check s
  expect "mcs-try " "$LOCKSWAP" report --map --algo mcs-tr
  expect "central-wp central-wp+bravo " "$LOCKSWAP" report --map --rwalgo central-
  # every option that takes a value (as each --help shows it): a file or a
  # folder where one is expected, and never a file name where none is
  local sub opt arg want
  for sub in "" compare profile report; do
    # shellcheck disable=SC2086
    while read -r opt arg; do
      case "$opt $arg $sub" in
        *" FILE "*|*" OUT "*|*" PATH "*|*" stdout|FILE "*) want="zz-dir zz-file " ;;
        *" DIR compare") want="zz-dir " ;;
        *) want="" ;;
      esac
      # shellcheck disable=SC2086
      expect "$want" "$LOCKSWAP" $sub "$opt" zz
    done < <("$LOCKSWAP" $sub --help | grep -oE -- '(^|[[:space:],[])--?[a-zA-Z][-a-zA-Z]* ([A-Z][A-Z]*|stdout\|FILE)( |$)' |
      sed -E 's/^[[:space:],[]//' | sort -u)
  done
  check_expected
}

@test "make install PREFIX=... DESTDIR=...: lockswap in bin, the subcommands in libexec/lockswap, the library (with its SONAME) and compare's engine in lib/TRIPLET/lockswap, lockswap(1), lockswap(7) and the completion where man and bash-completion look; make uninstall removes them all" {
  run make -C "$ROOT" --no-print-directory install PREFIX=/usr DESTDIR="$T/stage"
  assert_success
  (cd "$T/stage" && find . -type f | sort) >"$T/files"
  local f triplet
  triplet=$(cc -print-multiarch)
  [ -n "$triplet" ]
  for f in ./usr/bin/lockswap ./usr/libexec/lockswap/lockswap-profile ./usr/libexec/lockswap/lockswap-report \
    ./usr/libexec/lockswap/lockswap-compare ./usr/lib/$triplet/lockswap/liblockswap.so \
    ./usr/lib/$triplet/lockswap/lockswap_compare.zip ./usr/share/man/man1/lockswap.1 ./usr/share/man/man7/lockswap.7 \
    ./usr/share/bash-completion/completions/lockswap; do
    grep -qxF "$f" "$T/files" || { echo "not installed: $f"; cat "$T/files"; return 1; }
  done
  # nothing else in bin, nothing in lib itself
  [ "$(ls "$T/stage/usr/bin")" = lockswap ]
  [ -z "$(find "$T/stage/usr/lib" -maxdepth 1 -type f)" ]
  readelf -d "$T/stage/usr/lib/$triplet/lockswap/liblockswap.so" | grep -q 'SONAME.*\[liblockswap.so\]'
  cmp "$T/stage/usr/share/man/man7/lockswap.7" "$MAN7"
  # man finds the pages in the staged tree, bash-completion the completion
  run env MANPATH="$T/stage/usr/share/man" MANWIDTH=100 man 7 lockswap
  assert_success
  assert_output --partial "lock algorithms for the pthread mutexes"
  run bash -c 'source /usr/share/bash-completion/bash_completion
    BASH_COMPLETION_USER_DIR=/nonexistent; XDG_DATA_DIRS="$1/usr/share"
    __load_completion lockswap && complete -p lockswap' _ "$T/stage"
  assert_success
  assert_output "complete -F _lockswap lockswap"
  # the installed command runs its subcommands and the library from there
  run timeout 20 "$T/stage/usr/bin/lockswap" -a mcs -- "$PROGS/which_lib"
  assert_success
  assert_line --partial " $T/stage/usr/lib/$triplet/lockswap/liblockswap.so"
  run timeout 20 "$T/stage/usr/bin/lockswap" report --help
  assert_success
  # uninstall: every file gone, and the private folders
  echo keep >"$T/stage/usr/bin/other"
  run make -C "$ROOT" --no-print-directory uninstall PREFIX=/usr DESTDIR="$T/stage"
  assert_success
  [ "$(cd "$T/stage" && find . -type f)" = ./usr/bin/other ] || { (cd "$T/stage" && find . -type f); return 1; }
  [ ! -e "$T/stage/usr/libexec/lockswap" ] && [ ! -e "$T/stage/usr/lib/$triplet/lockswap" ]
}

@test "a build is made with the flags it is given: objects built with other CFLAGS, CPPFLAGS or LDFLAGS are rebuilt (make deb's package tree, whatever it held before)" {
  deb_built
  # a copy of the package's build tree (its times kept): built with
  # dpkg-buildflags' hardening flags, as debian/rules gives them
  local b=$T/b f
  cp -a "$ROOT/build/pkg" "$b"
  for f in lockswap-profile lockswap-report; do
    nm -D "$b/$f" | grep -q __stack_chk_fail && nm -D "$b/$f" | grep -q '_chk@' &&
      readelf -d "$b/$f" | grep -q 'BIND_NOW' || { echo "$f not built with the package's flags"; return 1; }
  done
  local bf=(env DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags)
  local pkg=(CFLAGS="$(cd "$ROOT" && "${bf[@]}" --get CFLAGS)" CPPFLAGS="$(cd "$ROOT" && "${bf[@]}" --get CPPFLAGS)"
    LDFLAGS="$(cd "$ROOT" && "${bf[@]}" --get LDFLAGS)")
  # the same flags again: nothing to do
  run make -C "$ROOT" --no-print-directory -n B="$b" "${pkg[@]}" all
  assert_success
  [[ "$output" != *" -o $b/"* && "$output" != *" -c "* ]] || { echo "$output"; return 1; }
  # other flags: every object and both commands rebuilt with them, none with the old
  local objs
  objs=$(cd "$b" && find . -name '*.o' | wc -l)
  [ "$objs" -ge 50 ] || { echo "only $objs objects in the package's tree"; return 1; }
  run make -C "$ROOT" --no-print-directory -n B="$b" CFLAGS="-O1 -g" all
  assert_success
  local compiles
  compiles=$(grep -E -- ' -c .* -o '"$b"'/|-o '"$b"'/.* -c ' <<<"$output" | grep -c -- '-O1 -g')
  [ "$compiles" -eq "$objs" ] || { echo "$compiles of $objs objects rebuilt with -O1 -g:"; echo "$output"; return 1; }
  for f in lockswap-profile lockswap-report; do
    grep -qE -- "-O1 -g .*-o $b/$f( |$)" <<<"$output" || { echo "$f not rebuilt with -O1 -g: $output"; return 1; }
  done
  [[ "$output" != *FORTIFY* && "$output" != *relro* ]] || { echo "$output"; return 1; }
}

@test "make deb: a Debian package built with debhelper holds what make install installs; installed into a fresh root with dpkg, its lockswap lists, runs a program with its own library, profiles and reports" {
  deb_built
  local deb
  deb=$(ls "$BATS_FILE_TMPDIR"/deb/lockswap_*_amd64.deb)
  [ -f "$deb" ]
  # debhelper's files cleaned from the tree, nothing written beside it
  run ls -A "$ROOT/debian"
  assert_output "$(printf '%s\n' changelog control copyright lockswap.install rules source)"
  [ -z "$(find "$ROOT/.." -maxdepth 1 -newer "$deb" -name 'lockswap*')" ]
  # the package's files: make install's, man pages compressed, plus the docs
  make -C "$ROOT" --no-print-directory install PREFIX=/usr DESTDIR="$T/stage" >/dev/null
  (cd "$T/stage" && find . -type f | sed -E 's,^(\./usr/share/man/.*),\1.gz,'
    echo ./usr/share/doc/lockswap/changelog.gz; echo ./usr/share/doc/lockswap/copyright) | sort >"$T/want"
  dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' | sort >"$T/got"
  diff -u "$T/want" "$T/got"
  # its dependencies, those dlopen'd too, are packages this machine has
  local dep
  run dpkg-deb -f "$deb" Depends
  for dep in libc6 libhwloc15 libunwind8 libdebuginfod1 libdw1; do
    [[ "$output" == *"$dep"* ]] || { echo "Depends: $output: no $dep"; return 1; }
    dpkg-query -W -f='${Status}' "$dep" | grep -q 'install ok installed'
  done
  # a fresh root with its own dpkg database
  local root=$T/root
  mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
  touch "$root/var/lib/dpkg/status"
  run dpkg --root="$root" --force-depends -i "$deb"
  assert_success
  [ "$(dpkg-query --root="$root" -W -f='${Status}' lockswap)" = "install ok installed" ]
  run "$root/usr/bin/lockswap" --list
  assert_success
  [ "$output" = "$("$LOCKSWAP" --list)" ]
  run "$root/usr/bin/lockswap" --version
  assert_output "lockswap $(dpkg-deb -f "$deb" Version)"
  local lib
  lib=$root/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/lockswap/liblockswap.so
  run timeout 20 "$root/usr/bin/lockswap" -a mcs -- "$PROGS/which_lib"
  assert_success
  local l
  for l in "${lines[@]}"; do
    [[ "$l" == *" $lib" ]] || { echo "not the installed library: $l"; return 1; }
  done
  run timeout 20 env LD_PRELOAD="$lib" LOCKSWAP_ALGO=clh "$PROGS/which_lib"
  assert_success
  assert_line --partial " $lib"
  # the licence, in the package
  zcat -f "$root/usr/share/doc/lockswap/copyright" | grep -q '^License: Expat'
  cmp <(sed -n '/^Permission is hereby granted/,$p' "$ROOT/LICENSE" | tr -s ' \n' ' ') \
    <(sed -n '/^ Permission is hereby granted/,$p' "$root/usr/share/doc/lockswap/copyright" | sed 's/^ //; s/^\.$//' | tr -s ' \n' ' ')
  # the subcommands from the installed paths
  run timeout 60 "$root/usr/bin/lockswap" profile --top 0 -o "$T/p.json" -- "$PROGS/flame" known
  assert_success
  run timeout 60 "$root/usr/bin/lockswap" report --folded --weight contended "$T/p.json"
  assert_success
  assert_line --regexp '^.*;worker;handle_request;cache_lookup;mutex #[0-9]+ cache_init \(flame.c:[0-9]+\) 3$'
  # compare's engine from lib/lockswap_compare.zip
  run timeout 60 "$root/usr/bin/lockswap" compare --algos mcs --reps 1 --no-plot -q --out "$T/c" -- "$PROGS/hello"
  assert_success
  assert_line "lockswap compare: 2 runs, 0 not ok; results in $T/c (results.csv, summary.txt)"
  grep -qx "lockswap: $root/usr/bin/lockswap" "$T/c/meta.txt"
  run env MANWIDTH=100 man -l "$root/usr/share/man/man7/lockswap.7.gz"
  assert_success
  assert_output --partial "c-tkt-tkt"
  # and it goes away whole
  run dpkg --root="$root" --purge lockswap
  assert_success
  [ -z "$(find "$root/usr" -type f)" ]
}

@test "make deb: lintian -I --pedantic finds no error and no warning in the package (nor a note of missing hardening)" {
  command -v lintian >/dev/null || skip "lintian is not installed (scripts/deps.sh test installs it)"
  deb_built
  local changes=$BATS_FILE_TMPDIR/deb/lockswap.changes
  run timeout -k 5 "$(hang_timeout)" lintian -I --pedantic "$changes"
  local tags
  tags=$(grep -E '^[EWI]: ' <<<"$output" || true)
  [ -z "$tags" ] || { echo "$output"; return 1; }
}
