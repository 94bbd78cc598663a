<?php
session_start();
$_SESSION['secret'] = 's3cr3t';
echo session_id();
