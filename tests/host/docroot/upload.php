<?php
// Describes the uploaded files (and proves the temporary file is readable).
$files = [];
foreach ($_FILES as $field => $f) {
    $files[$field] = [
        'name' => $f['name'],
        'type' => $f['type'],
        'size' => $f['size'],
        'error' => $f['error'],
        'md5' => is_uploaded_file($f['tmp_name']) ? md5_file($f['tmp_name']) : null,
        'tmp_name' => $f['tmp_name'],
    ];
}
header('Content-Type: application/json');
echo json_encode(['post' => $_POST, 'files' => $files]);
