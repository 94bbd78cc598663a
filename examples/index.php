<?php
// The front page, and the front controller for paths that match no file.
header('Content-Type: text/html; charset=utf-8');
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
if ($path !== '/' && $path !== '/index.php') {
    http_response_code(404);
    echo '<p>No page at ', htmlspecialchars($path), '. <a href="/">Home</a></p>';
    exit;
}
$info = ephpm_kv_info();
?>
<!doctype html>
<title>ephpm examples</title>
<h1>ephpm</h1>
<p>PHP <?= PHP_VERSION ?> on the <?= htmlspecialchars($info['mode']) ?> store
  (<?= $info['keys'] ?> keys, <?= $info['memory_used'] ?> bytes).</p>
<ul>
  <li><a href="/lock.php?release=del">lock.php?release=del</a>: a plain delete releases someone else's lock</li>
  <li><a href="/lock.php?release=del_if_eq">lock.php?release=del_if_eq</a>: compare-and-delete does not</li>
  <li><a href="/session.php">session.php</a>: a session counter in the store</li>
</ul>
