--TEST--
ephpm_kv_wait(): returns at once on a different version, times out on the same, version 0, expiry
--EXTENSIONS--
ephpm
--INI--
ephpm.compression=zstd
ephpm.compression_threshold=64
--FILE--
<?php
function timed(callable $f, ?float &$secs): mixed {
    $t = hrtime(true);
    $r = $f();
    $secs = (hrtime(true) - $t) / 1e9;
    return $r;
}

echo "-- version 0 on a missing key: nothing to report, times out\n";
var_dump(timed(fn() => ephpm_kv_wait('k', 0, 50), $s));
var_dump($s >= 0.045);
var_dump(ephpm_kv_wait('k', 0, 0));

echo "-- version 0 on a present key: returns at once\n";
ephpm_kv_set('k', 'v');
$r = timed(fn() => ephpm_kv_wait('k', 0, 5000), $s);
var_dump($r['value'], $s < 1.0);
$v1 = $r['version'];

echo "-- any other version than the current one: at once, even an unseen one\n";
$r = timed(fn() => ephpm_kv_wait('k', $v1 + 1000, 5000), $s);
var_dump($r['value'], $r['version'] === $v1, $s < 1.0);

echo "-- the current version: false after the timeout\n";
var_dump(timed(fn() => ephpm_kv_wait('k', $v1, 100), $s));
var_dump($s >= 0.095, $s < 2.0);

echo "-- every kind of change moves the version\n";
$v = $v1;
foreach (['set' => fn() => ephpm_kv_set('k', 'w'),
          'incr' => fn() => ephpm_kv_set('k', '1') && ephpm_kv_incr('k'),
          'expire' => fn() => ephpm_kv_expire('k', 100),
          'persist' => fn() => ephpm_kv_persist('k')] as $what => $change) {
    $change();
    $r = ephpm_kv_wait('k', $v, 0);
    printf("%-8s changed=%s value=%s\n", $what, var_export($r !== false && $r['version'] !== $v, true),
           var_export($r === false ? false : $r['value'], true));
    $v = $r['version'];
}

echo "-- expiry moves the version too, and wakes a waiter\n";
ephpm_kv_pexpire('k', 100);
$v = ephpm_kv_wait('k', 0, 0)['version'];   // the version pexpire gave it
$r = timed(fn() => ephpm_kv_wait('k', $v, PHP_INT_MAX), $s);
var_dump($r, $s >= 0.08, $s < 5.0);

echo "-- a compressed value comes back whole\n";
$big = str_repeat('wait for me ', 1000);
ephpm_kv_set('big', $big);
$r = ephpm_kv_wait('big', 0, 0);
var_dump($r['value'] === $big, ephpm_kv_info()['compressed_values']);

echo "-- NUL bytes\n";
ephpm_kv_set("w\0", "a\0b");
$r = ephpm_kv_wait("w\0", 0, 0);
var_dump(bin2hex($r['value']), ephpm_kv_wait('w', 0, 0));
?>
--EXPECT--
-- version 0 on a missing key: nothing to report, times out
bool(false)
bool(true)
bool(false)
-- version 0 on a present key: returns at once
string(1) "v"
bool(true)
-- any other version than the current one: at once, even an unseen one
string(1) "v"
bool(true)
bool(true)
-- the current version: false after the timeout
bool(false)
bool(true)
bool(true)
-- every kind of change moves the version
set      changed=true value='w'
incr     changed=true value='2'
expire   changed=true value='2'
persist  changed=true value='2'
-- expiry moves the version too, and wakes a waiter
array(2) {
  ["value"]=>
  NULL
  ["version"]=>
  int(0)
}
bool(true)
bool(true)
-- a compressed value comes back whole
bool(true)
int(1)
-- NUL bytes
string(6) "610062"
bool(false)
