--TEST--
ephpm_kv_expire_if_eq(): sets the TTL in ms only while the key holds the token
--EXTENSIONS--
ephpm
--FILE--
<?php
ephpm_kv_set('lock', 'tok');
var_dump(ephpm_kv_expire_if_eq('lock', 'tok', 5000), ephpm_kv_pttl('lock') > 4900);
echo "-- another token: nothing changes\n";
var_dump(ephpm_kv_expire_if_eq('lock', 'other', 100000), ephpm_kv_pttl('lock') <= 5000);
var_dump(ephpm_kv_expire_if_eq('lock', 'to', 100000), ephpm_kv_expire_if_eq('lock', 'tok2', 100000));
echo "-- missing key\n";
var_dump(ephpm_kv_expire_if_eq('missing', 'tok', 1000), ephpm_kv_exists('missing'));
echo "-- 0 deletes the key while it holds the token (as ephpm_kv_pexpire)\n";
var_dump(ephpm_kv_expire_if_eq('lock', 'other', 0), ephpm_kv_exists('lock'));
var_dump(ephpm_kv_expire_if_eq('lock', 'tok', 0), ephpm_kv_exists('lock'));
echo "-- expired keys never match\n";
ephpm_kv_set('short', 'tok');
ephpm_kv_pexpire('short', 20);
usleep(50000);
var_dump(ephpm_kv_expire_if_eq('short', 'tok', 10000), ephpm_kv_exists('short'));
echo "-- shortens as well as extends\n";
ephpm_kv_set('k', 'v', 100);
var_dump(ephpm_kv_expire_if_eq('k', 'v', 1500));
$p = ephpm_kv_pttl('k');
var_dump($p > 1000 && $p <= 1500);
?>
--EXPECT--
bool(true)
bool(true)
-- another token: nothing changes
bool(false)
bool(true)
bool(false)
bool(false)
-- missing key
bool(false)
bool(false)
-- 0 deletes the key while it holds the token (as ephpm_kv_pexpire)
bool(false)
bool(true)
bool(true)
bool(false)
-- expired keys never match
bool(false)
bool(false)
-- shortens as well as extends
bool(true)
bool(true)
