<?php
$server_leaks = array_values(array_filter(array_keys($_SERVER), function ($k) {
    return stripos($k, 'LEAK') !== false || strncmp($k, 'PHP_AUTH', 8) === 0 ||
        $k === 'HTTP_AUTHORIZATION' || $k === 'HTTP_COOKIE' || $k === 'CONTENT_TYPE';
}));
header('Content-Type: application/json');
echo json_encode([
    'status' => http_response_code(),
    'headers_list' => headers_list(),
    'get' => $_GET, 'post' => $_POST, 'cookie' => $_COOKIE, 'request' => $_REQUEST,
    'files' => $_FILES,
    'server_leaks' => $server_leaks,
    'query_string' => $_SERVER['QUERY_STRING'],
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
    'ob_level' => ob_get_level(),
    'session' => isset($_SESSION),
]);
