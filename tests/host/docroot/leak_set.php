<?php
// Changes every kind of per-request state and leaves it changed; the next
// request (leak_check.php) must see none of it.
header('X-Leak: yes');
http_response_code(418);
ini_set('precision', '3');
ini_set('max_execution_time', '7');
ini_set('display_errors', '0');
set_include_path('/nonexistent-leak');
error_reporting(E_ERROR);
date_default_timezone_set('Pacific/Chatham');
putenv('EPHPM_LEAK=1');
chdir('/');
$GLOBALS['leaky'] = 'global';
define('LEAK_CONST', 1);
function leak_fn(): void {}
class LeakClass {}
setcookie('leak_set_cookie', '1');
$_SESSION = ['not' => 'started'];
// What this request saw and its state now (as leak_check.php reports it),
// then an output buffer nobody ends.
echo json_encode([
    'get' => $_GET, 'post' => $_POST, 'cookie' => $_COOKIE,
    'x_leak_req' => $_SERVER['HTTP_X_LEAK_REQ'] ?? null,
    'auth_user' => $_SERVER['PHP_AUTH_USER'] ?? null,
    'state' => [
        'precision' => ini_get('precision'),
        'max_execution_time' => ini_get('max_execution_time'),
        'display_errors' => ini_get('display_errors'),
        'include_path' => get_include_path(),
        'error_reporting' => error_reporting(),
        'timezone' => date_default_timezone_get(),
        'env' => getenv('EPHPM_LEAK'),
        'cwd' => getcwd(),
        'global' => isset($GLOBALS['leaky']),
        'const' => defined('LEAK_CONST'),
        'function' => function_exists('leak_fn'),
        'class' => class_exists('LeakClass', false),
        'ob_level' => ob_get_level() + 2,  // counting the two buffers started below
        'session' => isset($_SESSION),
    ],
]), "\n";
ob_start();
ob_start();
echo 'unterminated buffer';
