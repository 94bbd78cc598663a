--TEST--
ephpm_kv_incr_by(): adds any delta and returns the new value
--EXTENSIONS--
ephpm
--FILE--
<?php
var_dump(ephpm_kv_incr_by('total', 10));
var_dump(ephpm_kv_incr_by('total', 32));
var_dump(ephpm_kv_incr_by('total', -50));
var_dump(ephpm_kv_get('total'));
var_dump(ephpm_kv_incr_by('total', 0));

echo "-- a delta of 0 on a missing key creates it as 0\n";
var_dump(ephpm_kv_incr_by('zero', 0), ephpm_kv_get('zero'));
?>
--EXPECT--
int(10)
int(42)
int(-8)
string(2) "-8"
int(-8)
-- a delta of 0 on a missing key creates it as 0
int(0)
string(1) "0"
