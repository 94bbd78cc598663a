<?php
header('Content-Type: application/json');
echo json_encode(['all' => getallheaders(), 'apache' => apache_request_headers()]);
