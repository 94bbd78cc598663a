#!/usr/bin/env bash
# Sets up, builds and runs every test.
#
#   scripts/test.sh            everything, against both PHP flavours: Debian's
#                              PHP (cmake-build/) and a thread-safe PHP built
#                              from Debian's source package (cmake-build-zts/;
#                              built into a cache on first use, ~15 minutes;
#                              there only the tests PHP is part of, the others
#                              being the same programs as in cmake-build/)
#   --php=debian | --php=zts   one flavour only
#   --sanitize=address,undefined   the same under ASan+UBSan (cmake-build-asan*/)
#   --sanitize=thread              the C++ suites under TSan with clang-14
#                                  (cmake-build-tsan/; PHP cannot load TSan code)
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=""
flavours=(debian zts)
for arg in "$@"; do
  case "$arg" in
    --sanitize=*) sanitize="${arg#--sanitize=}" ;;
    --php=debian) flavours=(debian) ;;
    --php=zts) flavours=(zts) ;;
    *) echo "usage: $0 [--php=debian|--php=zts] [--sanitize=address,undefined|--sanitize=thread]" >&2
       exit 2 ;;
  esac
done

bash scripts/install-deps.sh

run() {  # build-dir cmake-args...
  local build=$1
  shift
  cmake -S . -B "$build" "$@"
  cmake --build "$build" -j"$(nproc)"
  ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
}

if [ "$sanitize" = thread ]; then
  # clang: its -Wthread-safety checks the lock annotations as well.
  run cmake-build-tsan -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DEPHPM_SANITIZE=thread -DEPHPM_BUILD_BENCH=OFF -DEPHPM_BUILD_PHP=OFF
  exit 0
fi
if [ -n "$sanitize" ] && [ "$sanitize" != "address,undefined" ]; then
  echo "unknown sanitizer: $sanitize" >&2
  exit 2
fi

for flavour in "${flavours[@]}"; do
  args=()
  build=cmake-build
  if [ "$flavour" = zts ]; then
    php_config=$(bash scripts/build-zts-php.sh)
    args+=(-DPHP_CONFIG="$php_config")
    build=cmake-build-zts
  fi
  if [ -n "$sanitize" ]; then
    args+=(-DEPHPM_SANITIZE="$sanitize" -DEPHPM_BUILD_BENCH=OFF)
    build="${build/cmake-build/cmake-build-asan}"
  elif [ "$flavour" = zts ]; then
    # With both flavours, the programs that link no PHP ran in the Debian
    # build: the same programs, not built and run again (tests/CMakeLists.txt).
    # (Nor the benchmarks: their smoke test runs in the Debian build.)
    if [ "${#flavours[@]}" -gt 1 ]; then
      args+=(-DEPHPM_PHP_TESTS_ONLY=ON -DEPHPM_BUILD_BENCH=OFF)
    else
      args+=(-DEPHPM_PHP_TESTS_ONLY=OFF -DEPHPM_BUILD_BENCH=ON)
    fi
  fi
  echo "=== tests against the $flavour PHP in $build"
  run "$build" "${args[@]}"
done
