<?php
session_start();
$_SESSION['n'] = ($_SESSION['n'] ?? 0) + 1;
exit('exited');
