#!/usr/bin/env bash
# Runs one suite of the adapters' PHPUnit tests (php/tests/SUITE) with
# Debian's phpunit, against the extension in one of two modes:
#
#   run.sh PHP EPHPM_SO EPHPM_BINARY standalone|host SUITE
#
# standalone: in PHP's CLI with -d extension=EPHPM_SO (the process's own
#   store, as under php-fpm).
# host: inside the ephpm host (EPHPM_BINARY): the host serves a runner
#   script that runs PHPUnit in one HTTP request, with --resp on so that
#   tests can hold a key from outside PHP (redis-cli) while PHP waits on it.
#   The tests see EPHPM_TEST_MODE=host, EPHPM_TEST_RESP_PORT and
#   EPHPM_TEST_HTTP_URL (getenv()); in standalone mode EPHPM_TEST_MODE is
#   "standalone".
#
# SUITE "Symfony" also fetches Debian's symfony source package (once, into
# the cache, by scripts/fetch-php-src.sh) for Symfony's own contract tests:
# they are run from there and never copied into the repository.
#
# Fails when PHPUnit reports a failure, an error, or no test at all.
set -euo pipefail

if [ $# -ne 5 ]; then
  echo "usage: $0 PHP EPHPM_SO EPHPM_BINARY standalone|host SUITE" >&2
  exit 2
fi
php=$1
ext=$2
ephpm=$3
mode=$4
suite=$5
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

[ -d "$here/$suite" ] || { echo "FAIL: no suite $here/$suite"; exit 2; }
[ -x /usr/bin/phpunit ] || { echo "FAIL: phpunit missing (scripts/install-deps.sh)"; exit 1; }

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2> /dev/null || true; done
  wait 2> /dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

if [ "$suite" = Symfony ]; then
  src=$(EPHPM_PHP_SRC_PACKAGE=symfony EPHPM_SRC_MARKER=src/Symfony/Component/Lock/Tests \
        bash "$repo/scripts/fetch-php-src.sh")
  export SYMFONY_TESTS_ROOT=$src/src
fi

# Tests that start a PHP of their own (without the extension, or with other
# ephpm.* settings) take the PHP and the extension from here, in both modes.
EPHPM_TEST_PHP=$(command -v "$php")
EPHPM_TEST_EXTENSION=$(cd "$(dirname "$ext")" && pwd)/$(basename "$ext")
export EPHPM_TEST_PHP EPHPM_TEST_EXTENSION

junit=$tmp/junit.xml
case $mode in
  standalone)
    export EPHPM_TEST_MODE=standalone
    set +e
    "$php" -d extension="$ext" -d memory_limit=512M -d zend.assertions=1 /usr/bin/phpunit \
      --bootstrap "$here/bootstrap.php" --log-junit "$junit" "$here/$suite"
    rc=$?
    set -e
    ;;
  host)
    # The host reads no php.ini: the extensions PHPUnit and the frameworks
    # need are loaded by name from Debian's extension_dir.
    mods=(-d extension=dom -d extension=xml -d extension=xmlwriter -d extension=simplexml
          -d extension=mbstring -d extension=tokenizer -d extension=ctype -d extension=iconv
          -d extension=apcu -d extension=posix)
    mkdir -p "$tmp/docroot"
    cp "$here/host-runner.php" "$tmp/docroot/index.php"
    "$ephpm" --docroot "$tmp/docroot" --listen 127.0.0.1:0 --resp 127.0.0.1:0 \
      --log-level warn "${mods[@]}" -d memory_limit=512M -d html_errors=0 -d include_path=.:/usr/share/php \
      > "$tmp/host.out" 2> "$tmp/host.err" &
    pids+=("$!")
    http="" resp=""
    for _ in $(seq 1 200); do
      http=$(sed -n 's/^http listening on //p' "$tmp/host.out" 2> /dev/null | head -1)
      resp=$(sed -n 's/^resp listening on //p' "$tmp/host.out" 2> /dev/null | head -1)
      [ -n "$http" ] && [ -n "$resp" ] && break
      kill -0 "${pids[0]}" 2> /dev/null || { echo "FAIL: the host exited:"; cat "$tmp"/host.*; exit 1; }
      sleep 0.05
    done
    [ -n "$http" ] && [ -n "$resp" ] || { echo "FAIL: the host did not listen"; cat "$tmp"/host.*; exit 1; }
    # The runner takes its arguments as a JSON body: PHPUnit's argv and the
    # environment the tests read.
    body=$(RESP_PORT="${resp##*:}" HTTP_ADDR="$http" "$php" -r '
        $argv = array_slice($argv, 1);
        echo json_encode(["argv" => $argv, "env" => [
          "EPHPM_TEST_MODE" => "host", "EPHPM_TEST_RESP_PORT" => getenv("RESP_PORT"),
          "EPHPM_TEST_HTTP_URL" => "http://" . getenv("HTTP_ADDR"),
          "SYMFONY_TESTS_ROOT" => (string) getenv("SYMFONY_TESTS_ROOT"),
          "EPHPM_TEST_PHP" => getenv("EPHPM_TEST_PHP"),
          "EPHPM_TEST_EXTENSION" => getenv("EPHPM_TEST_EXTENSION")]]);' -- \
        phpunit --bootstrap "$here/bootstrap.php" --log-junit "$junit" "$here/$suite")
    set +e
    curl -sS --max-time 600 -o "$tmp/reply" -w '%{http_code}' \
      -H 'Content-Type: application/json' --data-binary "$body" "http://$http/" > "$tmp/status"
    curl_rc=$?
    set -e
    # PHPUnit's report is the reply (php://stdout is the response in the
    # host); the host's own output follows it.
    echo "--- runner's reply (HTTP $(cat "$tmp/status")):"
    cat "$tmp/reply"
    echo
    cat "$tmp/host.out"
    [ -s "$tmp/host.err" ] && { echo "--- host stderr:"; cat "$tmp/host.err"; }
    [ $curl_rc -eq 0 ] || { echo "FAIL: the request to the runner failed (curl $curl_rc)"; exit 1; }
    rc=$(sed -n 's/^phpunit exit code: //p' "$tmp/reply")
    [ -n "$rc" ] || { echo "FAIL: the runner did not report PHPUnit's exit code"; exit 1; }
    kill -TERM "${pids[0]}"
    wait "${pids[0]}" || { echo "FAIL: the host did not exit 0 on SIGTERM"; exit 1; }
    pids=()
    ;;
  *)
    echo "unknown mode: $mode" >&2
    exit 2
    ;;
esac

[ -f "$junit" ] || { echo "FAIL: PHPUnit wrote no JUnit log"; exit 1; }
tests=$("$php" -r '$x = simplexml_load_file($argv[1]); echo (int) $x->testsuite["tests"];' "$junit")
[ "$tests" -gt 0 ] || { echo "FAIL: no test ran"; exit 1; }
[ "$rc" -eq 0 ] || { echo "FAIL: PHPUnit exit code $rc ($mode, $suite)"; exit 1; }
echo "OK: $suite, $mode: $tests tests"
