<?php

/**
 * Test-only functions: compiled into the test build of the extension
 * (EPHPM_TEST_HOOKS), never into the shipped ephpm.so.
 *
 * @generate-function-entries
 */

/**
 * Installs an ops table through ephpm_set_kv_ops(), the path a host uses:
 * "standalone" (uninstall), "full" (a copy of the standalone store's table),
 * "short" (a host before del_if_eq), "tiny" (shorter than any table),
 * "abi" (another ABI version), "unreachable" (set_nx and del_if_eq report an
 * unreachable owner), "wrongtype" (key operations report WRONGTYPE).
 */
function ephpm_test_install_host_ops(string $variant): void {}
