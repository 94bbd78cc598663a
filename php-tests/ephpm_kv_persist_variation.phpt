--TEST--
ephpm_kv_persist(): saves a key from expiry; expired keys cannot be saved
--EXTENSIONS--
ephpm
--INI--
ephpm.compression=zstd
ephpm.compression_threshold=64
--FILE--
<?php
echo "-- persisted before it runs out\n";
ephpm_kv_set('k', 'v');
ephpm_kv_pexpire('k', 40);
var_dump(ephpm_kv_persist('k'));
usleep(80000);
var_dump(ephpm_kv_get('k'), ephpm_kv_pttl('k'));

echo "-- too late\n";
ephpm_kv_set('late', 'v');
ephpm_kv_pexpire('late', 20);
usleep(50000);
var_dump(ephpm_kv_persist('late'), ephpm_kv_exists('late'));

echo "-- a compressed value keeps its bytes\n";
$big = str_repeat('compress me ', 100);
ephpm_kv_set('big', $big, 50);
var_dump(ephpm_kv_persist('big'), ephpm_kv_ttl('big'), ephpm_kv_get('big') === $big);
var_dump(ephpm_kv_info()['compressed_values']);

echo "-- NUL bytes and coercive mode\n";
ephpm_kv_set("p\0", 'v', 10);
ephpm_kv_set('p', 'v', 10);
var_dump(ephpm_kv_persist("p\0"), ephpm_kv_ttl("p\0"), ephpm_kv_ttl('p'));
ephpm_kv_set('5', 'v', 10);
var_dump(ephpm_kv_persist(5), ephpm_kv_ttl('5'));
?>
--EXPECT--
-- persisted before it runs out
bool(true)
string(1) "v"
int(-1)
-- too late
bool(false)
bool(false)
-- a compressed value keeps its bytes
bool(true)
int(-1)
bool(true)
int(1)
-- NUL bytes and coercive mode
bool(true)
int(-1)
int(10)
bool(true)
int(-1)
