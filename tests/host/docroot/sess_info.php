<?php
// The session counters and the state of one session's keys, without a session.
$sid = $_GET['sid'] ?? '';
$info = ephpm_kv_info();
header('Content-Type: application/json');
echo json_encode([
    'waits' => $info['session_lock_waits'],
    'acquired' => $info['session_lock_acquired'],
    'lock_exists' => ephpm_kv_exists("session_lock:{{$sid}}"),
    'data_exists' => ephpm_kv_exists("session:{{$sid}}"),
]);
