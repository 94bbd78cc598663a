--TEST--
session: session.gc_maxlifetime of 0 or less means no TTL, a huge value the longest TTL, in the write and in the lazy_write refresh alike
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
session.save_path=
session.lazy_write=1
--FILE--
<?php
ob_start();  // session settings cannot change once output has gone out
const MAX_TTL_MS = PHP_INT_MAX >> 1;  // EPHPM_KV_MAX_TTL_MS

function ttl(string $sid): string {
    $ms = ephpm_kv_pttl("session:{{$sid}}");
    if ($ms === -2) return 'gone';
    if ($ms === -1) return 'none';
    // The longest TTL, less the few ms since it was set.
    if ($ms > MAX_TTL_MS - 60000) return 'max';
    return (string)intdiv($ms + 500, 1000) . 's';
}

function data(string $sid): string {
    return var_export(ephpm_kv_get("session:{{$sid}}"), true);
}

$n = 0;
foreach (['600', '0', '-1', '-9223372036854775808', PHP_INT_MAX, '9223372036854775',
          '4611686018427387', '4611686018427388'] as $lifetime) {
    ini_set('session.gc_maxlifetime', (string)$lifetime);
    echo "gc_maxlifetime=$lifetime\n";

    // The write (new data).
    $sid = 'g' . ++$n;
    session_id($sid);
    session_start();
    $_SESSION['v'] = $n;
    var_dump(session_write_close());
    echo "  write:   data=", data($sid), " ttl=", ttl($sid), "\n";

    // The refresh (lazy_write: a request that only reads), on data that has
    // a short TTL of its own.
    ephpm_kv_expire("session:{{$sid}}", 5);
    session_id($sid);
    session_start();
    var_dump(session_write_close());
    echo "  refresh: data=", data($sid), " ttl=", ttl($sid), "\n";

    // The refresh when the data went meanwhile: written back.
    session_id($sid);
    session_start();
    ephpm_kv_del("session:{{$sid}}");
    var_dump(session_write_close());
    echo "  gone:    data=", data($sid), " ttl=", ttl($sid), "\n";
}
echo ob_get_clean();
?>
--EXPECT--
gc_maxlifetime=600
bool(true)
  write:   data='v|i:1;' ttl=600s
bool(true)
  refresh: data='v|i:1;' ttl=600s
bool(true)
  gone:    data='v|i:1;' ttl=600s
gc_maxlifetime=0
bool(true)
  write:   data='v|i:2;' ttl=none
bool(true)
  refresh: data='v|i:2;' ttl=none
bool(true)
  gone:    data='v|i:2;' ttl=none
gc_maxlifetime=-1
bool(true)
  write:   data='v|i:3;' ttl=none
bool(true)
  refresh: data='v|i:3;' ttl=none
bool(true)
  gone:    data='v|i:3;' ttl=none
gc_maxlifetime=-9223372036854775808
bool(true)
  write:   data='v|i:4;' ttl=none
bool(true)
  refresh: data='v|i:4;' ttl=none
bool(true)
  gone:    data='v|i:4;' ttl=none
gc_maxlifetime=9223372036854775807
bool(true)
  write:   data='v|i:5;' ttl=max
bool(true)
  refresh: data='v|i:5;' ttl=max
bool(true)
  gone:    data='v|i:5;' ttl=max
gc_maxlifetime=9223372036854775
bool(true)
  write:   data='v|i:6;' ttl=max
bool(true)
  refresh: data='v|i:6;' ttl=max
bool(true)
  gone:    data='v|i:6;' ttl=max
gc_maxlifetime=4611686018427387
bool(true)
  write:   data='v|i:7;' ttl=max
bool(true)
  refresh: data='v|i:7;' ttl=max
bool(true)
  gone:    data='v|i:7;' ttl=max
gc_maxlifetime=4611686018427388
bool(true)
  write:   data='v|i:8;' ttl=max
bool(true)
  refresh: data='v|i:8;' ttl=max
bool(true)
  gone:    data='v|i:8;' ttl=max
