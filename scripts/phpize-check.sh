#!/usr/bin/env bash
# Proves PHP's own tooling works at the repository root: copies the tracked
# tree to a temporary directory and runs phpize, configure, make and
# make test there (so the checkout stays clean).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git ls-files -z | xargs -0 cp --parents -t "$tmp"
cd "$tmp"
phpize >/dev/null
# autoconf's cleanup tries "rm -f core", which is our directory: harmless.
./configure --enable-ephpm >configure.log 2>&1 || { cat configure.log; exit 1; }
make -j"$(nproc)" >make.log 2>&1 || { tail -50 make.log; exit 1; }
NO_INTERACTION=1 REPORT_EXIT_STATUS=1 make test
