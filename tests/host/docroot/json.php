<?php
// A JSON API: the body through php://input (readable twice), $_POST untouched.
$raw = file_get_contents('php://input');
header('Content-Type: application/json');
echo json_encode([
    'decoded' => json_decode($raw, true),
    'again' => file_get_contents('php://input') === $raw,
    'post' => $_POST,
]);
