#!/usr/bin/env bash
# Sets up, builds and runs every test.
#   scripts/test.sh                       the normal build (cmake-build/)
#   scripts/test.sh --sanitize=address,undefined   ASan+UBSan (cmake-build-asan/)
#   scripts/test.sh --sanitize=thread     TSan with clang-14 (cmake-build-tsan/)
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=""
for arg in "$@"; do
  case "$arg" in
    --sanitize=*) sanitize="${arg#--sanitize=}" ;;
    *) echo "usage: $0 [--sanitize=address,undefined|--sanitize=thread]" >&2; exit 2 ;;
  esac
done

bash scripts/install-deps.sh

build=cmake-build
args=()
case "$sanitize" in
  "") ;;
  thread)
    build=cmake-build-tsan
    # clang: its -Wthread-safety checks the lock annotations as well.
    args=(-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
          -DEPHPM_SANITIZE=thread -DEPHPM_BUILD_BENCH=OFF
          # Debian's php cannot load a module built with clang's static TSan
          # runtime; the extension holds no threads of its own (NTS PHP).
          -DEPHPM_BUILD_PHP=OFF) ;;
  address,undefined)
    build=cmake-build-asan
    args=(-DEPHPM_SANITIZE=address,undefined -DEPHPM_BUILD_BENCH=OFF) ;;
  *) echo "unknown sanitizer: $sanitize" >&2; exit 2 ;;
esac

cmake -S . -B "$build" "${args[@]}"
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
