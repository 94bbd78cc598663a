<?php
// The store from PHP, for the RESP interop checks.
header('Content-Type: application/json');
$k = $_GET['k'] ?? '';
switch ($_GET['op'] ?? '') {
    case 'get':
        echo json_encode(['value' => ephpm_kv_get($k), 'ttl' => ephpm_kv_ttl($k)]);
        break;
    case 'set':
        echo json_encode(['ok' => ephpm_kv_set($k, $_GET['v'] ?? '', (int)($_GET['ttl'] ?? 0))]);
        break;
    case 'incr':
        echo json_encode(['value' => ephpm_kv_incr($k)]);
        break;
    case 'setnx':  // the answer and any warning it came with
        $warning = null;
        set_error_handler(function (int $no, string $msg) use (&$warning): bool {
            $warning = $msg;
            return true;
        });
        $ok = ephpm_kv_setnx($k, $_GET['v'] ?? '', (int)($_GET['ttl'] ?? 0));
        restore_error_handler();
        echo json_encode(['ok' => $ok, 'warning' => $warning]);
        break;
    default:
        http_response_code(400);
}
