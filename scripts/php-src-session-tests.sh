#!/usr/bin/env bash
# Runs php-src's own session tests (ext/session/tests of Debian's php8.2
# source package, fetched by scripts/fetch-php-src.sh into a cache outside the
# repository) against the "ephpm" save handler, and checks the outcome
# against php-tests/php-src-session/cannot-apply.txt.
#
#   scripts/php-src-session-tests.sh --extension PATH/ephpm.so [--work DIR]
#                                    [--expected FILE]
#
# In a scratch directory (--work, emptied first; a temporary one by default)
# it makes two copies of the tests:
#   files/  untouched, run with the files handler (PHP's default): the
#           baseline, which says which tests can pass on this machine at all
#   ephpm/  every pin of the files handler rewritten to ephpm, run with
#           -d extension=PATH -d session.save_handler=ephpm
# Both runs pass -n (no php.ini) and -d session.save_path= (PHP's own
# default: Debian's php is patched to default to /var/lib/php/sessions, which
# three of the tests print).
#
# It fails when
#   - a test that is not listed fails (FAIL, BORK, LEAK, WARN) with ephpm,
#   - a test that is not listed skips with ephpm but not with files,
#   - a listed test passes with ephpm (the list must stay honest),
#   - a listed test is not in the fetched suite, or not named in
#     php-tests/README.
# Exit status 0 when none of that happened.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
ext=""
work=""
expected="$repo/php-tests/php-src-session/cannot-apply.txt"
while [ $# -gt 0 ]; do
  case "$1" in
    --extension) ext=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --expected) expected=$2; shift 2 ;;
    *) echo "usage: $0 --extension PATH [--work DIR] [--expected FILE]" >&2; exit 2 ;;
  esac
done
[ -n "$ext" ] && [ -f "$ext" ] || { echo "php-src-session-tests: --extension PATH/ephpm.so is required" >&2; exit 2; }
ext=$(realpath "$ext")
[ -f "$expected" ] || { echo "php-src-session-tests: $expected not found" >&2; exit 2; }

php=${PHP:-php}
php_api=$("$php" -n -i | sed -n 's/^PHP API => //p')
run_tests=${PHP_RUN_TESTS:-/usr/lib/php/$php_api/build/run-tests.php}
[ -f "$run_tests" ] || { echo "php-src-session-tests: $run_tests not found" >&2; exit 2; }

src=$(bash "$repo/scripts/fetch-php-src.sh")

if [ -z "$work" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
else
  rm -rf "$work"
  mkdir -p "$work"
  work=$(realpath "$work")
fi

# The tests run by a php whose directory holds no php-cgi: run-tests.php
# looks for one beside the php it runs, and the 19 tests that need it (HTTP
# requests, file uploads) skip, whether or not php8.2-cgi is installed.  See
# php-tests/README for why they are left out.
mkdir -p "$work/bin"
ln -s "$(realpath "$(command -v "$php")")" "$work/bin/php"

# A copy of the tests, laid out as in php-src: one test reaches
# ../../../sapi/cgi/tests/include.inc.
copy_tests() {
  mkdir -p "$1/ext/session" "$1/sapi/cgi/tests"
  cp -r "$src/ext/session/tests" "$1/ext/session/"
  cp "$src/sapi/cgi/tests/include.inc" "$1/sapi/cgi/tests/"
}

# The rewrite, in place, over every .phpt and .inc file of the ephpm copy:
#   session.save_handler=files   (an --INI-- line; spaces, quotes allowed)
#   ini_set('session.save_handler', 'files')
#   session_module_name('files')              (the same pin, by function)
#   string(5) "files"                          (in the expectations: in these
#                                               tests it is always the handler
#                                               name that ini_get() or
#                                               session_module_name() reports,
#                                               pinned or the default)
# Messages that name "files" as the handler that failed are left alone: they
# belong to tests of the files handler.
rewrite() {
  find "$1/ext/session/tests" -type f \( -name '*.phpt' -o -name '*.inc' \) -print0 |
    xargs -0 perl -pi -e '
      s/^(\s*session\.save_handler\s*=\s*)"?files"?(\s*)$/${1}ephpm${2}/;
      s/(ini_set\(\s*(["\x27])session\.save_handler\2\s*,\s*)(["\x27])files\3/${1}${3}ephpm${3}/g;
      s/(session_module_name\(\s*)(["\x27])files\2/${1}${2}ephpm${2}/g;
      s/^string\(5\) "files"$/string(5) "ephpm"/;
    '
}

# run NAME [php -d options...]: runs the copy in $work/NAME, writes the
# result of each test to $work/NAME.results ("STATUS<TAB>name.phpt").
run() {
  local name=$1
  shift
  local log="$work/$name.log"
  (cd "$work/$name" && NO_INTERACTION=1 REPORT_EXIT_STATUS=0 \
    "$php" -n "$run_tests" -p "$work/bin/php" -q -n -j2 --set-timeout 120 --show-slow 1000 \
      -W "$work/$name.status" -d session.save_path= "$@" ext/session/tests >"$log" 2>&1) || {
    echo "php-src-session-tests: run-tests.php failed ($name); the end of $log:" >&2
    tail -20 "$log" >&2
    exit 1
  }
  sed -E 's#^([A-Z]+)\t.*/([^/]+)$#\1\t\2#' "$work/$name.status" | sort -k2 >"$work/$name.results"
  local total
  total=$(wc -l <"$work/$name.results")
  if [ "$total" -lt 200 ]; then
    echo "php-src-session-tests: only $total results from the $name run; see $log" >&2
    exit 1
  fi
  awk -v n="$name" '
    { c[$1]++ }
    END {
      printf "%s handler: %d passed, %d failed, %d skipped (%d tests; %d expected to fail, %d borked, %d leaked, %d warned)\n",
        n, c["PASSED"], c["FAILED"], c["SKIPPED"], NR, c["XFAILED"], c["BORKED"], c["LEAKED"], c["WARNED"]
    }' "$work/$name.results"
}

copy_tests "$work/files"
run files
copy_tests "$work/ephpm"
rewrite "$work/ephpm"
# Each test is one PHP process with its own store: no other request can hold
# a session lock, so any wait for one is a request waiting on itself.  A short
# wait makes that a visible warning (a failed test) in 2 s, rather than a
# 30 s stall that the lock's 30 s TTL may end before the wait does.
run ephpm -d "extension=$ext" -d session.save_handler=ephpm -d ephpm.session_lock_wait_ms=2000

# ---- compare ------------------------------------------------------------------

# The list: one test file name per line; '#' starts a comment.
sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$expected" | sort -u >"$work/listed"

problems=0
problem() { echo "  $*"; problems=$((problems + 1)); }

echo "checking against ${expected#"$repo"/}:"
while IFS=$'\t' read -r status test; do
  listed=0
  grep -qxF "$test" "$work/listed" && listed=1
  case "$status" in
    PASSED | XFAILED)
      [ "$listed" = 1 ] && problem "$test is listed as cannot-apply but now ${status,,}: take it off the list (and out of php-tests/README)"
      ;;
    SKIPPED)
      if [ "$listed" = 0 ] && ! grep -qxF "SKIPPED	$test" "$work/files.results"; then
        problem "$test skipped with ephpm but not with files, and is not listed: $(grep -F "$test" "$work/ephpm.log" | grep -o 'reason: .*' | head -1)"
      fi
      ;;
    *)
      if [ "$listed" = 0 ]; then
        problem "$test: $status with ephpm and not listed as cannot-apply; see $work/ephpm/ext/session/tests/${test%.phpt}.diff"
      fi
      ;;
  esac
done <"$work/ephpm.results"

while read -r test; do
  grep -qP "\t\Q$test\E$" "$work/ephpm.results" || problem "$test is listed but is not in the fetched suite"
  grep -qF "$test" "$repo/php-tests/README" || problem "$test is listed but php-tests/README does not say why"
done <"$work/listed"

if [ "$problems" -gt 0 ]; then
  echo "FAILED: $problems problem(s)"
  exit 1
fi
echo "OK: every test that does not pass with ephpm is listed, and every listed test still does not pass ($(wc -l <"$work/listed") listed)"
