<?php
// Takes Ephpm\Lock $name with block() and holds it for hold_ms, recording
// when the hold began and ended (taken after the grant, before the release)
// and writing the fenced resource with the grant's fence.  end=release
// (default) releases it; leave, exit and fatal end the request holding it.
use Ephpm\Lock;

header('Content-Type: application/json');
$name = $_GET['name'] ?? 'lock';
$t0 = microtime(true);
$lock = Lock::block($name, (float)($_GET['ttl'] ?? 10), (float)($_GET['wait'] ?? 10));
if ($lock === null) {
    echo json_encode(['got' => false, 'waited' => microtime(true) - $t0]);
    return;
}
$start = microtime(true);
$fence = $lock->fence();
$written = ephpm_kv_set_fenced("res:$name", (string)$fence, $fence);
usleep((int)($_GET['hold_ms'] ?? 0) * 1000);
$end = microtime(true);
$out = ['got' => true, 'fence' => $fence, 'start' => $start, 'end' => $end,
        'waited' => $start - $t0, 'written' => $written,
        'seen' => ephpm_kv_get("res:$name") === (string)$fence];
switch ($_GET['end'] ?? 'release') {
    case 'leave':  // still held when the request ends
        static $kept;
        $kept = $lock;
        echo json_encode($out);
        return;
    case 'exit':
        $GLOBALS['kept'] = $lock;
        exit(json_encode($out));
    case 'fatal':
        $GLOBALS['kept'] = $lock;
        echo json_encode($out);
        ephpm_host_test_no_such_function();
    default:
        $out['released'] = $lock->release();
        echo json_encode($out);
}
