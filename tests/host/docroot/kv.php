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
    default:
        http_response_code(400);
}
