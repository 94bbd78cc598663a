<?php
// Marks that it started (so the test knows the request is in PHP), sleeps.
if (isset($_GET['mark'])) {
    ephpm_kv_set('slow:started', $_GET['mark']);
}
sleep((int)($_GET['s'] ?? 1));
echo 'slow done';
