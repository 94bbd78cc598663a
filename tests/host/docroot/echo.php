<?php
// What the request carried: method, body (via php://input), parsed form.
$in = file_get_contents('php://input');
header('Content-Type: application/json');
echo json_encode([
    'method' => $_SERVER['REQUEST_METHOD'],
    'len' => strlen($in),
    'md5' => md5($in),
    'post' => $_POST,
    'content_type' => $_SERVER['CONTENT_TYPE'] ?? null,
    'content_length' => $_SERVER['CONTENT_LENGTH'] ?? null,
]);
