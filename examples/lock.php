<?php
// The design note's demo: A takes a lock with a 1 s TTL and overruns it,
// B takes the lock, A "releases", C tries.
//   curl localhost:8131/lock.php?release=del        holder ends up 'c'
//   curl localhost:8131/lock.php?release=del_if_eq  holder stays 'B'
header('Content-Type: text/plain; charset=utf-8');

$release = $_GET['release'] ?? 'del_if_eq';
if ($release !== 'del' && $release !== 'del_if_eq') {
    http_response_code(400);
    echo "release must be del or del_if_eq\n";
    exit;
}

// A key of its own per run, so concurrent demos do not meet.
$key = 'lock:nightly-report:' . bin2hex(random_bytes(8));

$show = function (string $label, $value): void {
    printf("%-24s %s\n", $label, var_export($value, true));
};

$show('A acquires (1s TTL):', ephpm_kv_setnx($key, 'a', 1));
usleep(1200000);  // A runs past its TTL
$show('B acquires (30s TTL):', ephpm_kv_setnx($key, 'B', 30));
if ($release === 'del') {
    $show('A releases with del:', ephpm_kv_del($key));
} else {
    $show('A releases with del_if_eq:', ephpm_kv_del_if_eq($key, 'a'));
}
$show('C tries to acquire:', ephpm_kv_setnx($key, 'c', 30));
$show('lock holder now:', ephpm_kv_get($key));
ephpm_kv_del($key);
