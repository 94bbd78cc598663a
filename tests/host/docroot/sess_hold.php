<?php
// Opens the session (taking its lock) and holds it for s seconds.
session_start();
$_SESSION['held'] = true;
sleep((int)($_GET['s'] ?? 5));
echo 'held';
