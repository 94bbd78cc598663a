<?php
// Reads the counter, takes 50 ms, writes it back incremented: without the
// session lock, concurrent requests overwrite each other's increments.
session_start();
$n = $_SESSION['n'] ?? 0;
usleep(50000);
$_SESSION['n'] = $n + 1;
echo $_SESSION['n'];
