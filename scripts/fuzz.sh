#!/usr/bin/env bash
# Builds the RESP request parser's fuzzer (libFuzzer with ASan and UBSan,
# clang-14) in its own build tree, cmake-build-fuzz/, and runs it for a
# bounded time.
#
#   scripts/fuzz.sh [SECONDS]        default 60
#
# The committed seed corpus fuzz/corpus/resp_parser/ is only read; inputs the
# fuzzer finds go to cmake-build-fuzz/corpus/resp_parser/ (kept between runs)
# and crashing inputs to cmake-build-fuzz/artifacts/.  Exits non-zero when the
# fuzzer finds a crash, a sanitizer report, an invariant violation, a leak or
# a timeout.  Reproduce one with:
#   cmake-build-fuzz/fuzz/resp_parser_fuzz cmake-build-fuzz/artifacts/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
case "$seconds" in
  ''|*[!0-9]*|0) echo "usage: $0 [SECONDS]  (a positive whole number, default 60)" >&2; exit 2 ;;
esac

bash scripts/install-deps.sh

build=cmake-build-fuzz
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DEPHPM_FUZZ=ON -DEPHPM_BUILD_TESTS=OFF -DEPHPM_BUILD_BENCH=OFF -DEPHPM_BUILD_PHP=OFF
cmake --build "$build" --target resp_parser_fuzz -j"$(nproc)"

corpus="$build/corpus/resp_parser"
artifacts="$build/artifacts"
mkdir -p "$corpus" "$artifacts"

echo "fuzz: running resp_parser_fuzz for ${seconds}s"
# The first corpus directory receives new inputs; the seed corpus is read only.
"$build/fuzz/resp_parser_fuzz" \
  -max_total_time="$seconds" \
  -timeout=10 \
  -rss_limit_mb=2048 \
  -print_final_stats=1 \
  -artifact_prefix="$artifacts/" \
  "$corpus" fuzz/corpus/resp_parser
echo "fuzz: no crash in ${seconds}s"
