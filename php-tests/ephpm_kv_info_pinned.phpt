--TEST--
ephpm_kv_info(): pinned_keys and pinned_bytes count live locks, which allkeys-lru never evicts
--EXTENSIONS--
ephpm
--INI--
ephpm.memory_limit=4K
ephpm.eviction_policy=allkeys-lru
--FILE--
<?php
$info = ephpm_kv_info();
var_dump($info['pinned_keys'], $info['pinned_bytes']);

echo "-- setnx without a TTL is data, with a TTL a lock\n";
var_dump(ephpm_kv_setnx('plain', 'v'));
var_dump(ephpm_kv_setnx('lock', str_repeat('t', 32), 60));
$info = ephpm_kv_info();
var_dump($info['pinned_keys'], $info['pinned_bytes'] > 32, $info['pinned_bytes'] < $info['memory_used']);

echo "-- filling the store evicts data, never the lock\n";
for ($i = 0; $i < 60; $i++) {
    if (!ephpm_kv_set("k$i", random_bytes(200))) echo "refused k$i\n";
}
$info = ephpm_kv_info();
var_dump($info['evicted'] > 0, $info['memory_used'] <= 4096);
var_dump(ephpm_kv_get('lock') === str_repeat('t', 32), ephpm_kv_setnx('lock', 'other', 60));
var_dump($info['pinned_keys']);

echo "-- a value larger than the whole limit is refused before anything is evicted\n";
$before = ephpm_kv_info();
var_dump(@ephpm_kv_set('huge', str_repeat('x', 8192)));
$after = ephpm_kv_info();
var_dump($after['evicted'] === $before['evicted'], $after['keys'] === $before['keys']);

echo "-- persist drops the pin, and the release takes the lock away\n";
var_dump(ephpm_kv_persist('lock'));
var_dump(ephpm_kv_info()['pinned_keys']);
var_dump(ephpm_kv_setnx('lock2', 'tok', 60), ephpm_kv_info()['pinned_keys']);
var_dump(ephpm_kv_del_if_eq('lock2', 'tok'));
$info = ephpm_kv_info();
var_dump($info['pinned_keys'], $info['pinned_bytes']);
?>
--EXPECT--
int(0)
int(0)
-- setnx without a TTL is data, with a TTL a lock
bool(true)
bool(true)
int(1)
bool(true)
bool(true)
-- filling the store evicts data, never the lock
bool(true)
bool(true)
bool(true)
bool(false)
int(1)
-- a value larger than the whole limit is refused before anything is evicted
bool(false)
bool(true)
bool(true)
-- persist drops the pin, and the release takes the lock away
bool(true)
int(0)
bool(true)
int(1)
bool(true)
int(0)
int(0)
