--TEST--
ephpm_kv_pttl(): milliseconds left, -1 without expiry, -2 when missing
--EXTENSIONS--
ephpm
--FILE--
<?php
var_dump(ephpm_kv_pttl('missing'));
ephpm_kv_set('forever', 'v');
var_dump(ephpm_kv_pttl('forever'));
ephpm_kv_set('k', 'v', 3);
$ms = ephpm_kv_pttl('k');
var_dump($ms > 2500 && $ms <= 3000);
ephpm_kv_pexpire('k', 800);
$ms = ephpm_kv_pttl('k');
var_dump($ms > 300 && $ms <= 800);
?>
--EXPECT--
int(-2)
int(-1)
bool(true)
bool(true)
