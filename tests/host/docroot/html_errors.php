<?php
// html_errors as requests see it, and how a warning is displayed.
header('Content-Type: application/json');
ob_start();
echo $undefined_variable;
$shown = ob_get_clean();
echo json_encode(['ini' => ini_get('html_errors'), 'html' => str_contains($shown, '<b>Warning</b>')]);
