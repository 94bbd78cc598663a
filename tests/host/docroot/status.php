<?php
switch ($_GET['mode'] ?? '') {
    case 'code':
        http_response_code(201);
        echo 'created';
        break;
    case 'line':
        header('HTTP/1.1 404 Not Found');
        echo 'not here';
        break;
    case 'redirect':
        header('Location: /hello.php', true, 302);
        break;
    case 'teapot':
        header('X-Status: teapot', true, 418);
        echo 'short and stout';
        break;
    default:
        echo 'default';
}
