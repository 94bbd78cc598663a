--TEST--
ephpm_kv_* writes while the log cannot be written (a full tmpfs): false with Redis's AOF warning, reads go on, sessions are not written
--EXTENSIONS--
ephpm
session
--SKIPIF--
<?php
if (trim((string)shell_exec('id -u')) !== '0') die('skip mounting a tmpfs needs root');
$probe = sys_get_temp_dir() . '/ephpm-phpt-probe-' . getmypid();
@mkdir($probe);
exec('mount -t tmpfs -o size=64k tmpfs ' . escapeshellarg($probe) . ' 2>&1', $out, $rc);
if ($rc === 0) exec('umount ' . escapeshellarg($probe));
@rmdir($probe);
if ($rc !== 0) die('skip mounting a tmpfs is refused here');
?>
--FILE--
<?php
require __DIR__ . '/persistence.inc';
$mnt = persist_temp_dir('full');
exec('mount -t tmpfs -o size=256k tmpfs ' . escapeshellarg($mnt) . ' 2>&1', $out, $rc);
if ($rc !== 0) throw new RuntimeException('mount failed: ' . implode("\n", $out));
register_shutdown_function(function () use ($mnt) {
    exec('umount ' . escapeshellarg($mnt) . ' 2>/dev/null');
    persist_remove_tree($mnt);
});
putenv("EPHPM_TEST_MNT=$mnt");
$ini = ['ephpm.persistence' => 'log', 'ephpm.data_dir' => "$mnt/data", 'ephpm.fsync' => 'always',
        'session.save_handler' => 'ephpm', 'session.use_cookies' => '0',
        'session.cache_limiter' => ''];
[$code, $stdout, $stderr] = persist_run($ini, <<<'PHP'
set_error_handler(function (int $no, string $msg): bool {
    echo "warning: $msg\n";
    return true;
});
echo "-- a write bigger than the disk: false (its change stays in memory, unconfirmed)\n";
var_dump(ephpm_kv_set('big', str_repeat('x', 300 * 1024)));
echo "-- further writes are refused while the log cannot be written\n";
var_dump(ephpm_kv_set('k', 'v'));
var_dump(ephpm_kv_setnx('k', 'v'));
var_dump(ephpm_kv_del('big'));
var_dump(ephpm_kv_incr('n'));
var_dump(ephpm_kv_expire('big', 10));
var_dump(ephpm_kv_persist('big'));
var_dump(ephpm_kv_flush_all());
echo "-- reads go on\n";
var_dump(strlen(ephpm_kv_get('big')), ephpm_kv_exists('k'));
var_dump(ephpm_kv_info()['persistence_write_error']);
echo "-- a session: its lock needs no disk, its write is refused\n";
session_id('fulldisk0123456789');
var_dump(session_start());
$_SESSION['a'] = 1;
var_dump(session_write_close());
var_dump(ephpm_kv_exists('session_lock:{fulldisk0123456789}'));
echo "-- room again: writes resume\n";
exec('mount -o remount,size=8m ' . escapeshellarg(getenv('EPHPM_TEST_MNT')), $o, $rc);
var_dump($rc);
for ($i = 0; $i < 500 && ephpm_kv_info()['persistence_write_error'] !== ''; $i++) usleep(10000);
var_dump(ephpm_kv_info()['persistence_write_error'], ephpm_kv_set('after', '1'));
PHP);
echo $code, "\n", $stdout, $stderr;
?>
--EXPECTF--
0
-- a write bigger than the disk: false (its change stays in memory, unconfirmed)
warning: ephpm_kv_set(): Errors writing to the AOF file: No space left on device
bool(false)
-- further writes are refused while the log cannot be written
warning: ephpm_kv_set(): Errors writing to the AOF file: No space left on device
bool(false)
warning: ephpm_kv_setnx(): Errors writing to the AOF file: No space left on device
bool(false)
warning: ephpm_kv_del(): Errors writing to the AOF file: No space left on device
bool(false)
warning: ephpm_kv_incr(): Errors writing to the AOF file: No space left on device
bool(false)
warning: ephpm_kv_expire(): Errors writing to the AOF file: No space left on device
bool(false)
warning: ephpm_kv_persist(): Errors writing to the AOF file: No space left on device
bool(false)
warning: ephpm_kv_flush_all(): Errors writing to the AOF file: No space left on device
bool(false)
-- reads go on
int(307200)
bool(false)
string(23) "No space left on device"
-- a session: its lock needs no disk, its write is refused
bool(true)
warning: session_write_close(): Session fulldisk0123456789: writing the session data failed: Errors writing to the AOF file: No space left on device
warning: session_write_close(): Failed to write session data %s
bool(%s)
bool(false)
-- room again: writes resume
int(0)
string(0) ""
bool(true)
