--TEST--
ephpm_kv_persist(): removes a TTL; false when there is none or no key
--EXTENSIONS--
ephpm
--FILE--
<?php
ephpm_kv_set('k', 'v', 100);
var_dump(ephpm_kv_persist('k'));
var_dump(ephpm_kv_ttl('k'), ephpm_kv_get('k'));
var_dump(ephpm_kv_persist('k'));
var_dump(ephpm_kv_persist('missing'));
?>
--EXPECT--
bool(true)
int(-1)
string(1) "v"
bool(false)
bool(false)
