--TEST--
ephpm_kv_wait(): returns the value and version once the version differs
--EXTENSIONS--
ephpm
--FILE--
<?php
ephpm_kv_set('config', 'v1');
$r = ephpm_kv_wait('config', 0, 1000);
var_dump(array_keys($r), $r['value'], is_int($r['version']) && $r['version'] > 0);

echo "-- nothing changed: false after the timeout\n";
var_dump(ephpm_kv_wait('config', $r['version'], 20));

echo "-- a write moves the version\n";
ephpm_kv_set('config', 'v2');
$r2 = ephpm_kv_wait('config', $r['version'], 1000);
var_dump($r2['value'], $r2['version'] > $r['version']);

echo "-- a delete: value null, version 0\n";
ephpm_kv_del('config');
var_dump(ephpm_kv_wait('config', $r2['version'], 1000));
?>
--EXPECT--
array(2) {
  [0]=>
  string(5) "value"
  [1]=>
  string(7) "version"
}
string(2) "v1"
bool(true)
-- nothing changed: false after the timeout
bool(false)
-- a write moves the version
string(2) "v2"
bool(true)
-- a delete: value null, version 0
array(2) {
  ["value"]=>
  NULL
  ["version"]=>
  int(0)
}
