--TEST--
ephpm_kv_get(): returns the stored string, null when missing
--EXTENSIONS--
ephpm
--FILE--
<?php
var_dump(ephpm_kv_get('missing'));
var_dump(ephpm_kv_set('greeting', 'hello'));
var_dump(ephpm_kv_get('greeting'));
var_dump(ephpm_kv_set('empty', ''));
var_dump(ephpm_kv_get('empty'));
?>
--EXPECT--
NULL
bool(true)
string(5) "hello"
bool(true)
string(0) ""
