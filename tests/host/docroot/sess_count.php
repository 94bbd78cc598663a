<?php
// Counts in the session; reports the lock counters and any warnings (a
// lock that could not be had is a warning, collected here so that the
// answer stays JSON).
$warnings = [];
set_error_handler(function (int $no, string $msg) use (&$warnings): bool {
    $warnings[] = $msg;
    return true;
});
session_start();
$_SESSION['n'] = ($_SESSION['n'] ?? 0) + 1;
$info = ephpm_kv_info();
header('Content-Type: application/json');
echo json_encode([
    'n' => $_SESSION['n'],
    'sid' => session_id(),
    'waits' => $info['session_lock_waits'],
    'acquired' => $info['session_lock_acquired'],
    'warnings' => $warnings,
]);
