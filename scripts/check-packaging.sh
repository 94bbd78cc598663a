#!/usr/bin/env bash
# The Composer manifests: composer.json (the extension, type php-ext, for
# PIE) and php/composer.json (the adapters).  `composer validate` checks
# Composer's schema (Debian's Composer 2.5 does not know php-ext yet, so the
# publish check, which refuses that section, is left to
# scripts/check-packaging.php, which checks it against PIE's schema, config.m4
# and ext/).  Then the checker must refuse three broken copies, so that a
# checker that lets everything through fails here.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
command -v composer > /dev/null || { echo "FAIL: composer missing (scripts/install-deps.sh)"; exit 1; }

composer validate --no-interaction --no-check-publish --no-check-lock "$repo/composer.json"
composer validate --no-interaction --no-check-lock "$repo/php/composer.json"
php "$repo/scripts/check-packaging.php" "$repo"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
broken() {  # description, then a PHP expression that edits $j (the root manifest)
  rm -rf "$tmp/r" && mkdir -p "$tmp/r"
  cp -a "$repo/config.m4" "$repo/ext" "$repo/php" "$tmp/r/"
  php -r '$j = json_decode(file_get_contents($argv[1]), true); '"$2"'; file_put_contents($argv[2], json_encode($j));' \
    "$repo/composer.json" "$tmp/r/composer.json"
  if php "$repo/scripts/check-packaging.php" "$tmp/r" > "$tmp/out" 2>&1; then
    echo "FAIL: the checker accepted a manifest with $1"; exit 1
  fi
  echo "refused as it should ($1): $(head -1 "$tmp/out")"
}
broken "another extension name" '$j["php-ext"]["extension-name"] = "other"'
broken "a priority out of range" '$j["php-ext"]["priority"] = 5'
broken "config.m4's option missing" '$j["php-ext"]["configure-options"] = []'
broken "a key PIE does not define" '$j["php-ext"]["support-windows"] = true'
echo "OK: packaging"
