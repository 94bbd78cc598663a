--TEST--
ephpm_kv_del_if_eq(): removes the key only while it holds the token
--EXTENSIONS--
ephpm
--FILE--
<?php
ephpm_kv_setnx('lock', 'my-token', 30);

echo "-- someone else's token\n";
var_dump(ephpm_kv_del_if_eq('lock', 'not-mine'));
var_dump(ephpm_kv_get('lock'), ephpm_kv_ttl('lock'));

echo "-- my token\n";
var_dump(ephpm_kv_del_if_eq('lock', 'my-token'));
var_dump(ephpm_kv_exists('lock'));

echo "-- nothing left to release\n";
var_dump(ephpm_kv_del_if_eq('lock', 'my-token'));
var_dump(ephpm_kv_del_if_eq('never-set', 'x'));

echo "-- an empty value matches an empty token\n";
ephpm_kv_set('empty', '');
var_dump(ephpm_kv_del_if_eq('empty', 'x'), ephpm_kv_del_if_eq('empty', ''));
var_dump(ephpm_kv_exists('empty'));
?>
--EXPECT--
-- someone else's token
bool(false)
string(8) "my-token"
int(30)
-- my token
bool(true)
bool(false)
-- nothing left to release
bool(false)
bool(false)
-- an empty value matches an empty token
bool(false)
bool(true)
bool(false)
