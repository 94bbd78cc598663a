<?php
// A session counter: every request with the same cookie adds one.  The
// session lives in the store (session.save_handler=ephpm), locked for the
// request, released by token at its end.
session_start();
$_SESSION['count'] = ($_SESSION['count'] ?? 0) + 1;
header('Content-Type: text/plain; charset=utf-8');
echo "count: {$_SESSION['count']}\n";
echo 'session: ', session_id(), "\n";
