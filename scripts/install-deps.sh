#!/usr/bin/env bash
# Installs what building and testing ephpm needs on Debian 12.  Safe to run
# again: apt-get skips what is installed.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake pkg-config git clang-14 libclang-rt-14-dev
  # libraries
  libabsl-dev libzstd-dev libxxhash-dev libboost-dev liblua5.1-0-dev lua-cjson-dev lua-bitop-dev
  # PHP: headers, php-config, CLI, embed SAPI; php-parser for gen_stub.php
  php8.2-dev php8.2-cli libphp8.2-embed php-parser
  # tests and benchmarks: real Redis clients and servers to compare with
  catch2 libbenchmark-dev redis-server redis-tools php8.2-redis curl
  # model-based testing of the store (RapidCheck, with shrinking)
  librapidcheck-dev
  # the frameworks' own suites over phpredis (tests/frameworks/run.sh)
  phpunit php-symfony-lock php-symfony-cache php-cache-integration-tests
  php-laravel-framework
  # the adapters in php/ (Symfony, Laravel, PSR-16, WordPress) and their
  # end-to-end runs: WordPress 6.1 with a private MariaDB on the host
  php-psr-simple-cache wordpress mariadb-server php8.2-mysql php8.2-mbstring
  php8.2-xml php8.2-apcu
  # the Composer manifests (scripts/check-packaging.sh)
  composer
  # Redis's own Tcl units against ephpm (tests/redis-tcl/run.sh)
  tcl8.6
  # strict mode: the etcd client's JSON (cluster/etcd_client.cc), and a real
  # etcd cluster for its tests (tests/etcd/etcd-cluster.sh)
  nlohmann-json3-dev etcd-server etcd-client python3
)

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
