<?php
$before = isset($_SESSION);
session_start();
header('Content-Type: application/json');
echo json_encode(['before' => $before, 'session' => $_SESSION, 'sid' => session_id()]);
