--TEST--
session: lazy_write refreshes the TTL of unchanged data without rewriting it
--EXTENSIONS--
ephpm
session
--INI--
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.use_strict_mode=0
session.lazy_write=1
session.gc_maxlifetime=600
--FILE--
<?php
session_id('lazy1');
session_start();
$_SESSION['k'] = 'v';
session_write_close();
var_dump(ephpm_kv_ttl('session:{lazy1}'));
ephpm_kv_expire('session:{lazy1}', 5);
$version = ephpm_kv_wait('session:{lazy1}', 0, 0)['version'];

session_id('lazy1');
session_start();          // reads, changes nothing
session_write_close();    // update_timestamp: TTL back to gc_maxlifetime
var_dump(ephpm_kv_ttl('session:{lazy1}'));
var_dump(ephpm_kv_get('session:{lazy1}'));
// A refresh moves the version (an EXPIRE), but the value was not rewritten
// under a new one: it is byte-for-byte the same.
var_dump(ephpm_kv_wait('session:{lazy1}', $version, 0)['value']);

// Gone meanwhile: the unchanged data is written back.
session_id('lazy1');
session_start();
ephpm_kv_del('session:{lazy1}');
session_write_close();
var_dump(ephpm_kv_get('session:{lazy1}'), ephpm_kv_ttl('session:{lazy1}'));
?>
--EXPECT--
int(600)
int(600)
string(10) "k|s:1:"v";"
string(10) "k|s:1:"v";"
string(10) "k|s:1:"v";"
int(600)
