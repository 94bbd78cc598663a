--TEST--
ephpm_kv_keys(): lists the live keys; "*" by default
--EXTENSIONS--
ephpm
--FILE--
<?php
var_dump(ephpm_kv_keys());
foreach (['user:1', 'user:2', 'session:abc', 'count'] as $k) ephpm_kv_set($k, 'v');
$all = ephpm_kv_keys();
sort($all);
var_dump($all);
$users = ephpm_kv_keys('user:*');
sort($users);
var_dump($users);
var_dump(ephpm_kv_keys('nothing*'));
?>
--EXPECT--
array(0) {
}
array(4) {
  [0]=>
  string(5) "count"
  [1]=>
  string(11) "session:abc"
  [2]=>
  string(6) "user:1"
  [3]=>
  string(6) "user:2"
}
array(2) {
  [0]=>
  string(6) "user:1"
  [1]=>
  string(6) "user:2"
}
array(0) {
}
