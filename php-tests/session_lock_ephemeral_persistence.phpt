--TEST--
session lock with ephpm.persistence=log: after a crash the session data is back and its lock is not; an ephpm_kv_setnx() key is data and comes back
--EXTENSIONS--
ephpm
session
--FILE--
<?php
require __DIR__ . '/persistence.inc';
$dir = persist_temp_dir('sesslock');
register_shutdown_function(fn() => persist_remove_tree($dir));
$ini = ['ephpm.persistence' => 'log', 'ephpm.data_dir' => "$dir/data", 'ephpm.fsync' => 'always',
        'session.save_handler' => 'ephpm', 'session.use_cookies' => '0',
        'session.cache_limiter' => '', 'ephpm.session_lock_wait_ms' => '500'];

echo "-- a request writes its session, takes the lock again and dies (SIGKILL)\n";
$child = persist_start($ini, '
    session_id("persistlock0123456789");
    session_start();
    $_SESSION["n"] = 41;
    session_write_close();
    ephpm_kv_setnx("plain:lock", "tok", 600);
    session_start();
    echo ephpm_kv_exists("session_lock:{persistlock0123456789}") ? "lock held\n" : "no lock\n";
    fgets(STDIN);');
echo $child['line'], "\n";
persist_kill($child);

echo "-- the next process: the data is back, the lock is not\n";
[$code, $out, $err] = persist_run($ini, '
    var_dump(ephpm_kv_exists("session_lock:{persistlock0123456789}"));
    var_dump(ephpm_kv_exists("session:{persistlock0123456789}"));
    var_dump(ephpm_kv_get("plain:lock"), ephpm_kv_ttl("plain:lock") > 590);
    session_id("persistlock0123456789");
    var_dump(session_start(), $_SESSION["n"]);
    $i = ephpm_kv_info();
    echo "lock waits ", $i["session_lock_waits"], ", acquired ", $i["session_lock_acquired"], "\n";');
echo $code, "\n", $out, $err;
?>
--EXPECT--
-- a request writes its session, takes the lock again and dies (SIGKILL)
lock held
-- the next process: the data is back, the lock is not
0
bool(false)
bool(true)
string(3) "tok"
bool(true)
bool(true)
int(41)
lock waits 0, acquired 1
