<?php
// A buffer whose callback throws everything away, never ended.
ob_start(function (string $buffer): string {
    return '';
});
echo 'swallowed';
