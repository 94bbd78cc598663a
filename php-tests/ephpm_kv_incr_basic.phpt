--TEST--
ephpm_kv_incr(): adds one and returns the new value
--EXTENSIONS--
ephpm
--FILE--
<?php
var_dump(ephpm_kv_incr('hits'));
var_dump(ephpm_kv_incr('hits'));
var_dump(ephpm_kv_incr('hits'));
var_dump(ephpm_kv_get('hits'));

ephpm_kv_set('n', '41');
var_dump(ephpm_kv_incr('n'), ephpm_kv_get('n'));

ephpm_kv_set('neg', '-2');
var_dump(ephpm_kv_incr('neg'), ephpm_kv_incr('neg'), ephpm_kv_incr('neg'));
var_dump(ephpm_kv_get('neg'));
?>
--EXPECT--
int(1)
int(2)
int(3)
string(1) "3"
int(42)
string(2) "42"
int(-1)
int(0)
int(1)
string(1) "1"
