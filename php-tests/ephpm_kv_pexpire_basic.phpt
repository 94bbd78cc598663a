--TEST--
ephpm_kv_pexpire(): sets a TTL in milliseconds; false for a missing key; 0 deletes
--EXTENSIONS--
ephpm
--FILE--
<?php
ephpm_kv_set('k', 'v');
var_dump(ephpm_kv_pexpire('k', 5000));
$pttl = ephpm_kv_pttl('k');
var_dump($pttl > 4000 && $pttl <= 5000);
var_dump(ephpm_kv_ttl('k'));

var_dump(ephpm_kv_pexpire('missing', 5000));

var_dump(ephpm_kv_pexpire('k', 0));
var_dump(ephpm_kv_exists('k'), ephpm_kv_pttl('k'));
?>
--EXPECT--
bool(true)
bool(true)
int(5)
bool(false)
bool(true)
bool(false)
int(-2)
