<?php
// ephpm_kv_setnx / ephpm_kv_del_if_eq with a 30 s TTL, the result and the
// warning they raised, as JSON (the cluster_strict group).
$warning = null;
set_error_handler(function (int $no, string $msg) use (&$warning) {
    $warning = $msg;
    return true;
});
$key = (string)($_GET['key'] ?? '');
$token = (string)($_GET['token'] ?? '');
$result = ($_GET['op'] ?? '') === 'setnx'
    ? ephpm_kv_setnx($key, $token, 30)
    : ephpm_kv_del_if_eq($key, $token);
header('Content-Type: application/json');
echo json_encode(['result' => $result, 'warning' => $warning]);
