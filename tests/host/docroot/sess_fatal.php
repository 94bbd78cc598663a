<?php
session_start();
$_SESSION['n'] = ($_SESSION['n'] ?? 0) + 1;
ephpm_host_test_no_such_function();
