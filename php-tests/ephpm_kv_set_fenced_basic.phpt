--TEST--
ephpm_kv_set_fenced(): writes while the fence is not older than the newest recorded for the key
--EXTENSIONS--
ephpm
--FILE--
<?php
var_dump(ephpm_kv_set_fenced('res', 'a', 5));
var_dump(ephpm_kv_get('res'), ephpm_kv_ttl('res'));
echo "-- the same fence again: written\n";
var_dump(ephpm_kv_set_fenced('res', 'b', 5), ephpm_kv_get('res'));
echo "-- an older fence: refused, value unchanged\n";
var_dump(ephpm_kv_set_fenced('res', 'old', 4), ephpm_kv_get('res'));
echo "-- a newer fence: written, and now the bar\n";
var_dump(ephpm_kv_set_fenced('res', 'c', 9), ephpm_kv_set_fenced('res', 'd', 6), ephpm_kv_get('res'));
echo "-- with a TTL in seconds\n";
var_dump(ephpm_kv_set_fenced('res', 'e', 10, 30), ephpm_kv_ttl('res'));
echo "-- the record outlives the value: a delete does not lower the bar\n";
ephpm_kv_del('res');
var_dump(ephpm_kv_set_fenced('res', 'late', 9), ephpm_kv_exists('res'));
var_dump(ephpm_kv_set_fenced('res', 'f', 10), ephpm_kv_get('res'));
echo "-- fences are per key\n";
var_dump(ephpm_kv_set_fenced('other', 'x', 1));
?>
--EXPECT--
bool(true)
string(1) "a"
int(-1)
-- the same fence again: written
bool(true)
string(1) "b"
-- an older fence: refused, value unchanged
bool(false)
string(1) "b"
-- a newer fence: written, and now the bar
bool(true)
bool(false)
string(1) "c"
-- with a TTL in seconds
bool(true)
int(30)
-- the record outlives the value: a delete does not lower the bar
bool(false)
bool(false)
bool(true)
string(1) "f"
-- fences are per key
bool(true)
