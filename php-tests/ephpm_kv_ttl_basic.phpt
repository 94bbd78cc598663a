--TEST--
ephpm_kv_ttl(): seconds left, -1 without expiry, -2 when missing
--EXTENSIONS--
ephpm
--FILE--
<?php
var_dump(ephpm_kv_ttl('missing'));
ephpm_kv_set('forever', 'v');
var_dump(ephpm_kv_ttl('forever'));
ephpm_kv_set('hour', 'v', 3600);
var_dump(ephpm_kv_ttl('hour'));
ephpm_kv_setnx('lock', 'v', 30);
var_dump(ephpm_kv_ttl('lock'));
ephpm_kv_set('zero', 'v', 0);
var_dump(ephpm_kv_ttl('zero'));
?>
--EXPECT--
int(-2)
int(-1)
int(3600)
int(30)
int(-1)
