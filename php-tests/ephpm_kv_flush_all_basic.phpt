--TEST--
ephpm_kv_flush_all(): removes every key
--EXTENSIONS--
ephpm
--FILE--
<?php
for ($i = 0; $i < 50; $i++) ephpm_kv_set("k$i", str_repeat('v', $i));
ephpm_kv_set('ttl', 'v', 100);
ephpm_kv_incr('counter');
var_dump(ephpm_kv_info()['keys']);

var_dump(ephpm_kv_flush_all());
$info = ephpm_kv_info();
var_dump($info['keys'], $info['memory_used']);
var_dump(ephpm_kv_keys(), ephpm_kv_get('k1'), ephpm_kv_exists('ttl'), ephpm_kv_ttl('counter'));

echo "-- the store is usable afterwards\n";
var_dump(ephpm_kv_set('k1', 'again'), ephpm_kv_get('k1'));
var_dump(ephpm_kv_flush_all(), ephpm_kv_flush_all());
var_dump(ephpm_kv_info()['keys']);
?>
--EXPECT--
int(52)
bool(true)
int(0)
int(0)
array(0) {
}
NULL
bool(false)
int(-2)
-- the store is usable afterwards
bool(true)
string(5) "again"
bool(true)
bool(true)
int(0)
