--TEST--
ephpm_kv_setnx(): expired entries count as absent, binary keys, TTL 0
--EXTENSIONS--
ephpm
--FILE--
<?php
echo "-- an expired lock can be taken\n";
var_dump(ephpm_kv_setnx('lock', 'old'));
var_dump(ephpm_kv_pexpire('lock', 30));
usleep(60000);
var_dump(ephpm_kv_setnx('lock', 'new', 10));
var_dump(ephpm_kv_get('lock'), ephpm_kv_ttl('lock'));

echo "-- NUL bytes make distinct keys\n";
ephpm_kv_set('a', '1');
var_dump(ephpm_kv_setnx("a\0b", "x\0y"));
var_dump(ephpm_kv_setnx("a\0", 'z'));
var_dump(ephpm_kv_setnx("a\0b", 'again'));
var_dump(bin2hex(ephpm_kv_get("a\0b")), ephpm_kv_get('a'), ephpm_kv_get("a\0"));

echo "-- TTL 0 is no expiry\n";
var_dump(ephpm_kv_setnx('forever', 'v', 0), ephpm_kv_ttl('forever'));

echo "-- an empty value still occupies the key\n";
var_dump(ephpm_kv_setnx('empty', ''), ephpm_kv_setnx('empty', 'v'), ephpm_kv_get('empty'));

echo "-- coercive mode\n";
var_dump(ephpm_kv_setnx(99, 100), ephpm_kv_get('99'));
?>
--EXPECT--
-- an expired lock can be taken
bool(true)
bool(true)
bool(true)
string(3) "new"
int(10)
-- NUL bytes make distinct keys
bool(true)
bool(true)
bool(false)
string(6) "780079"
string(1) "1"
string(1) "z"
-- TTL 0 is no expiry
bool(true)
int(-1)
-- an empty value still occupies the key
bool(true)
bool(false)
string(0) ""
-- coercive mode
bool(true)
string(3) "100"
