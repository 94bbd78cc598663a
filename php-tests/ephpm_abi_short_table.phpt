--TEST--
Host ops tables: a table without del_if_eq, a refused table, a full table, and back (test build)
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!function_exists('ephpm_test_install_host_ops')) die('skip test build only'); ?>
--FILE--
<?php
function show(callable $f): void {
    try {
        var_dump($f());
    } catch (Throwable $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}

// One call of every function, for the refused tables.
function every_function(): array {
    return [
        'get' => fn() => ephpm_kv_get('k'),
        'set' => fn() => ephpm_kv_set('k', 'v'),
        'setnx' => fn() => ephpm_kv_setnx('k', 'v'),
        'del' => fn() => ephpm_kv_del('k'),
        'del_if_eq' => fn() => ephpm_kv_del_if_eq('k', 'v'),
        'exists' => fn() => ephpm_kv_exists('k'),
        'incr' => fn() => ephpm_kv_incr('n'),
        'decr' => fn() => ephpm_kv_decr('n'),
        'incr_by' => fn() => ephpm_kv_incr_by('n', 2),
        'expire' => fn() => ephpm_kv_expire('k', 10),
        'pexpire' => fn() => ephpm_kv_pexpire('k', 10),
        'persist' => fn() => ephpm_kv_persist('k'),
        'ttl' => fn() => ephpm_kv_ttl('k'),
        'pttl' => fn() => ephpm_kv_pttl('k'),
        'mget' => fn() => ephpm_kv_mget(['k']),
        'keys' => fn() => ephpm_kv_keys(),
        'flush_all' => fn() => ephpm_kv_flush_all(),
        'wait' => fn() => ephpm_kv_wait('k', 0, 0),
        'info' => fn() => ephpm_kv_info(),
    ];
}

function refused(string $variant): void {
    echo "-- $variant\n";
    ephpm_test_install_host_ops($variant);
    $messages = [];
    foreach (every_function() as $name => $call) {
        try {
            $call();
            echo "$name: no error\n";
        } catch (Error $e) {
            $messages[get_class($e) . ': ' . $e->getMessage()][] = $name;
        }
    }
    foreach ($messages as $message => $names) {
        echo $message, "\n  from ", count($names), " functions\n";
    }
}

ephpm_kv_set('lock', 'token');

echo "-- short: a host from before del_if_eq\n";
ephpm_test_install_host_ops('short');
show(fn() => ephpm_kv_info());
show(fn() => ephpm_kv_del_if_eq('lock', 'token'));
show(fn() => ephpm_kv_get('lock'));
show(fn() => ephpm_kv_set('other', 'v'));
show(fn() => ephpm_kv_get('other'));
show(fn() => ephpm_kv_setnx('lock', 'x'));
show(fn() => ephpm_kv_mget(['lock']));

refused('tiny');
refused('abi');

echo "-- full: a complete host table over the same store\n";
ephpm_test_install_host_ops('full');
show(fn() => ephpm_kv_info()['mode'] === 'host');
show(fn() => ephpm_kv_get('lock'));
show(fn() => ephpm_kv_del_if_eq('lock', 'token'));

echo "-- standalone again\n";
ephpm_test_install_host_ops('standalone');
show(fn() => ephpm_kv_info()['mode']);
show(fn() => ephpm_kv_get('other'));
show(fn() => ephpm_kv_exists('lock'));

echo "-- an unknown variant\n";
show(fn() => ephpm_test_install_host_ops('nonsense'));
show(fn() => ephpm_kv_info()['mode']);
?>
--EXPECTF--
-- short: a host from before del_if_eq
Error: ephpm_kv_info(): the host's ops table (ABI %d, %d bytes) has no info operation; upgrade the host program
Error: ephpm_kv_del_if_eq(): the host's ops table (ABI %d, %d bytes) has no del_if_eq operation; upgrade the host program
string(5) "token"
bool(true)
string(1) "v"
bool(false)
Error: ephpm_kv_mget(): the host's ops table (ABI %d, %d bytes) has no mget operation; upgrade the host program
-- tiny
Error: ephpm: the host's ops table is %d bytes, shorter than any ABI %d table
  from 19 functions
-- abi
Error: ephpm: the host's ops table has ABI version %d, this extension speaks version %d
  from 19 functions
-- full: a complete host table over the same store
bool(true)
string(5) "token"
bool(true)
-- standalone again
string(10) "standalone"
string(1) "v"
bool(false)
-- an unknown variant
ValueError: ephpm_test_install_host_ops(): Argument #1 ($variant) is not a known variant
string(10) "standalone"
