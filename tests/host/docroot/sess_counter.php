<?php
// A session's counter, read from the store without opening the session (so
// without taking its lock), and the store's lock counters.
$sid = $_GET['sid'] ?? '';
$data = (string)ephpm_kv_get("session:{{$sid}}");
$info = ephpm_kv_info();
header('Content-Type: application/json');
echo json_encode([
    'n' => preg_match('/(?:^|;)n\|i:(\d+);/', $data, $m) ? (int)$m[1] : null,
    'waits' => $info['session_lock_waits'],
]);
