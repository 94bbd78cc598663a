<?php
// The front controller: every path that names no file ends up here.
header('X-Front-Controller: yes');
header('Content-Type: text/plain; charset=utf-8');
echo 'front controller: ', $_SERVER['REQUEST_URI'], ' script=', $_SERVER['SCRIPT_NAME'];
