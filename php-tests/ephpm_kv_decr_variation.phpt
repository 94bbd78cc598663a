--TEST--
ephpm_kv_decr(): keeps the TTL, starts from 0, the highest int64 goes down
--EXTENSIONS--
ephpm
--FILE--
<?php
ephpm_kv_set('tokens', '2', 50);
var_dump(ephpm_kv_decr('tokens'), ephpm_kv_ttl('tokens'));

ephpm_kv_set('max', (string)PHP_INT_MAX);
var_dump(ephpm_kv_decr('max'));

ephpm_kv_set('exp', '10');
ephpm_kv_pexpire('exp', 20);
usleep(50000);
var_dump(ephpm_kv_decr('exp'));

ephpm_kv_decr("bin\0key");
var_dump(ephpm_kv_get("bin\0key"), ephpm_kv_exists('bin'));

// incr and decr share one counter
ephpm_kv_incr('mixed');
ephpm_kv_incr('mixed');
ephpm_kv_decr('mixed');
var_dump(ephpm_kv_get('mixed'));
?>
--EXPECT--
int(1)
int(50)
int(9223372036854775806)
int(-1)
string(2) "-1"
bool(false)
string(1) "1"
