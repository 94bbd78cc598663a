--TEST--
session: an exception thrown while $_SESSION is encoded (__sleep, __serialize) leaves the stored data as it was, not truncated
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
session.save_path=
--FILE--
<?php
class Fragile {
    public function __sleep(): array { throw new RuntimeException('no sleep'); }
}
class Fragile2 {
    public function __serialize(): array { throw new RuntimeException('no serialize'); }
}
foreach (['e1' => new Fragile, 'e2' => new Fragile2] as $sid => $obj) {
    ephpm_kv_set("session:{{$sid}}", 'a|i:1;');
    session_id($sid);
    session_start();
    $_SESSION['b'] = $obj;
    try {
        session_write_close();
    } catch (RuntimeException $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
    var_dump(ephpm_kv_get("session:{{$sid}}"), ephpm_kv_exists("session_lock:{{$sid}}"));
}
?>
--EXPECTF--
Warning: session_write_close(): Session e1: the data was not written: an exception was thrown while it was encoded, so it may be incomplete; the stored data is kept in %s on line %d
RuntimeException: no sleep
string(6) "a|i:1;"
bool(false)

Warning: session_write_close(): Session e2: the data was not written: an exception was thrown while it was encoded, so it may be incomplete; the stored data is kept in %s on line %d
RuntimeException: no serialize
string(6) "a|i:1;"
bool(false)
