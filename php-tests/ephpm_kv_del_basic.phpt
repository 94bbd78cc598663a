--TEST--
ephpm_kv_del(): removes a key and returns how many entries it removed
--EXTENSIONS--
ephpm
--FILE--
<?php
ephpm_kv_set('k', 'v');
ephpm_kv_set('other', 'v');
var_dump(ephpm_kv_del('k'));
var_dump(ephpm_kv_get('k'), ephpm_kv_exists('k'));
var_dump(ephpm_kv_del('k'));
var_dump(ephpm_kv_del('never-set'));
var_dump(ephpm_kv_get('other'));
var_dump(ephpm_kv_info()['keys']);
?>
--EXPECT--
int(1)
NULL
bool(false)
int(0)
int(0)
string(1) "v"
int(1)
