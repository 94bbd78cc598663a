<?php
// One session request: the handler's lock, read, the increment, its fenced
// write and release (session.save_handler=ephpm, the host's default).
//   GET /session.php with a PHPSESSID cookie
// Answers 503 when the session handler warned (the lock not taken, its
// outcome unknown, the write refused; ephpm.session_lock_failure=proceed
// goes on without the lock), so that the bench counts only requests served
// as the handler promises.
$warnings = [];
set_error_handler(function (int $no, string $message) use (&$warnings) {
    $warnings[] = $message;
    return true;
});
session_start();
$_SESSION['n'] = ($_SESSION['n'] ?? 0) + 1;
session_write_close();
if ($warnings !== []) {
    http_response_code(503);
    echo implode("\n", $warnings), "\n";
    return;
}
echo $_SESSION['n'], "\n";
