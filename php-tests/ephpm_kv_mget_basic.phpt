--TEST--
ephpm_kv_mget(): values in the order of the keys, null for missing ones
--EXTENSIONS--
ephpm
--FILE--
<?php
ephpm_kv_set('a', 'A');
ephpm_kv_set('c', 'C');
ephpm_kv_set('empty', '');
var_dump(ephpm_kv_mget(['c', 'b', 'a', 'empty', 'a']));
var_dump(ephpm_kv_mget([]));
?>
--EXPECT--
array(5) {
  [0]=>
  string(1) "C"
  [1]=>
  NULL
  [2]=>
  string(1) "A"
  [3]=>
  string(0) ""
  [4]=>
  string(1) "A"
}
array(0) {
}
