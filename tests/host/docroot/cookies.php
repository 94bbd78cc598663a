<?php
setcookie('first', '1');
setcookie('second', 'two words', ['path' => '/app', 'httponly' => true]);
header('X-Multi: a');
header('X-Multi: b', false);
header('Content-Type: application/json');
echo json_encode($_COOKIE);
