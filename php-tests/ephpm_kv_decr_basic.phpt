--TEST--
ephpm_kv_decr(): subtracts one and returns the new value
--EXTENSIONS--
ephpm
--FILE--
<?php
var_dump(ephpm_kv_decr('stock'));
var_dump(ephpm_kv_decr('stock'));
var_dump(ephpm_kv_get('stock'));
ephpm_kv_set('seats', '3');
var_dump(ephpm_kv_decr('seats'), ephpm_kv_decr('seats'), ephpm_kv_decr('seats'), ephpm_kv_decr('seats'));
var_dump(ephpm_kv_get('seats'));
?>
--EXPECT--
int(-1)
int(-2)
string(2) "-2"
int(2)
int(1)
int(0)
int(-1)
string(2) "-1"
