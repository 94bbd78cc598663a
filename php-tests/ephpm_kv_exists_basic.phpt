--TEST--
ephpm_kv_exists(): whether a live entry is there
--EXTENSIONS--
ephpm
--FILE--
<?php
var_dump(ephpm_kv_exists('k'));
ephpm_kv_set('k', 'v');
var_dump(ephpm_kv_exists('k'));
ephpm_kv_set('empty', '');
var_dump(ephpm_kv_exists('empty'));
ephpm_kv_incr('counter');
var_dump(ephpm_kv_exists('counter'));
ephpm_kv_del('k');
var_dump(ephpm_kv_exists('k'));
?>
--EXPECT--
bool(false)
bool(true)
bool(true)
bool(true)
bool(false)
