#!/usr/bin/env bash
# Regenerates ext/ephpm_arginfo.h from ext/ephpm.stub.php with PHP's own
# gen_stub.php.  gen_stub.php would download PHP-Parser; Debian's php-parser
# package is made visible under the directory name it expects instead.
#   scripts/gen-arginfo.sh           regenerate
#   scripts/gen-arginfo.sh --check   fail when the committed header differs
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=$(php-config --extension-dir | sed 's|/[^/]*$||')/$(php-config --phpapi)/build
[ -f "$build_dir/gen_stub.php" ] || build_dir=/usr/lib/php/$(php-config --phpapi)/build
[ -d /usr/share/php/PhpParser ] || { echo "install Debian's php-parser" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$build_dir/gen_stub.php" "$tmp/"
version=$(grep -o '\$version = "[0-9.]*"' "$tmp/gen_stub.php" | grep -o '[0-9.]*')
mkdir -p "$tmp/PHP-Parser-$version/lib"
ln -s /usr/share/php/PhpParser "$tmp/PHP-Parser-$version/lib/PhpParser"

stubs=(ephpm ephpm_test)
if [ "${1:-}" = "--check" ]; then
  for s in "${stubs[@]}"; do
    cp "ext/$s.stub.php" "$tmp/"
    php "$tmp/gen_stub.php" -f "$tmp/$s.stub.php" >/dev/null
    if ! diff -u "ext/${s}_arginfo.h" "$tmp/${s}_arginfo.h"; then
      echo "ext/${s}_arginfo.h is stale: run scripts/gen-arginfo.sh" >&2
      exit 1
    fi
    echo "ext/${s}_arginfo.h matches ext/$s.stub.php"
  done
else
  for s in "${stubs[@]}"; do php "$tmp/gen_stub.php" -f "ext/$s.stub.php"; done
fi
