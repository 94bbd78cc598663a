#!/usr/bin/env bash
# Builds a thread-safe (ZTS) PHP with the embed SAPI and the CLI from Debian's
# php8.2 source package, into a cache outside the checkout, and reuses it
# when it is there:
#
#   ${EPHPM_CACHE:-$HOME/.cache/ephpm}/php-zts/bin/php-config
#
# Prints that php-config's path on stdout (and nothing else).  About 15
# minutes on 2 cores the first time.  Runs as root or with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${EPHPM_CACHE:-${HOME:-/tmp}/.cache/ephpm}"
prefix="$cache/php-zts"
log() { echo "build-zts-php: $*" >&2; }

if [ -x "$prefix/bin/php-config" ] && [ -f "$prefix/.complete" ]; then
  echo "$prefix/bin/php-config"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
need=(build-essential pkg-config autoconf bison re2c)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
    "${missing[@]}" >&2
fi

src=$(bash scripts/fetch-php-src.sh)
work="$cache/php-zts-build"
mkdir -p "$cache"
exec 8>"$cache/.php-zts.lock"
flock 8
# A previous run may have finished while this one waited for the lock.
if [ -x "$prefix/bin/php-config" ] && [ -f "$prefix/.complete" ]; then
  echo "$prefix/bin/php-config"
  exit 0
fi

log "building a thread-safe PHP from $src (about 15 minutes)"
rm -rf "$work" "$prefix"
cp -a "$src" "$work"
cd "$work"
# Only what the host and the tests need: the embed SAPI (libphp) and the
# CLI, thread safety, PHP's per-thread execution timers, the session
# extension; everything else off.
./configure --prefix="$prefix" \
  --enable-embed=shared --enable-zts --disable-zend-signals \
  --enable-zend-max-execution-timers --disable-cgi --disable-phpdbg \
  --disable-all --enable-session --enable-ctype --enable-filter --enable-tokenizer \
  --with-config-file-path="$prefix/etc" >&2
make -j"$(nproc)" >&2
make install >&2
# Debian's patches give php-config and phpize an @DEBIAN_PHP_API@ path
# element that only Debian's packaging fills in; the upstream configure in
# the source package leaves it, while the files are installed without it.
api=$(sed -n 's/^#define ZEND_MODULE_API_NO \([0-9]*\).*/\1/p' "$prefix/include/php/Zend/zend_modules.h")
sed -i -e 's|/@DEBIAN_PHP_API@||g' -e "s|@DEBIAN_PHP_API@|$api|g" \
  "$prefix/bin/php-config" "$prefix/bin/phpize"
mkdir -p "$prefix/etc"
touch "$prefix/.complete"
cd /
rm -rf "$work"
log "done: $prefix"
echo "$prefix/bin/php-config"
