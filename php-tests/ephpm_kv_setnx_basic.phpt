--TEST--
ephpm_kv_setnx(): creates only a missing key, and says whether it did
--EXTENSIONS--
ephpm
--FILE--
<?php
var_dump(ephpm_kv_setnx('lock', 'token-1'));
var_dump(ephpm_kv_setnx('lock', 'token-2'));
var_dump(ephpm_kv_get('lock'), ephpm_kv_ttl('lock'));

echo "-- free again after a delete\n";
var_dump(ephpm_kv_del('lock'));
var_dump(ephpm_kv_setnx('lock', 'token-3', 30));
var_dump(ephpm_kv_get('lock'), ephpm_kv_ttl('lock'));

echo "-- a refused setnx leaves value and TTL alone\n";
var_dump(ephpm_kv_setnx('lock', 'token-4', 5));
var_dump(ephpm_kv_get('lock'), ephpm_kv_ttl('lock'));

echo "-- a key made by set counts as existing\n";
ephpm_kv_set('plain', 'x');
var_dump(ephpm_kv_setnx('plain', 'y'), ephpm_kv_get('plain'));
?>
--EXPECT--
bool(true)
bool(false)
string(7) "token-1"
int(-1)
-- free again after a delete
int(1)
bool(true)
string(7) "token-3"
int(30)
-- a refused setnx leaves value and TTL alone
bool(false)
string(7) "token-3"
int(30)
-- a key made by set counts as existing
bool(false)
string(1) "x"
