--TEST--
ephpm_kv_del_if_eq(): exact byte comparison, expired entries never match
--EXTENSIONS--
ephpm
--FILE--
<?php
ephpm_kv_set('lock', "tok\0en");

echo "-- near misses\n";
foreach (['tok', "tok\0", "tok\0e", "tok\0en\0", "TOK\0EN", "tok\0eN", "tok en", 'token'] as $t) {
    printf("%-16s %s\n", bin2hex($t), var_export(ephpm_kv_del_if_eq('lock', $t), true));
}
var_dump(bin2hex(ephpm_kv_get('lock')));

echo "-- the exact bytes\n";
var_dump(ephpm_kv_del_if_eq('lock', "tok\0en"));

echo "-- a NUL in the key\n";
ephpm_kv_set("k\0", 't');
ephpm_kv_set('k', 't');
var_dump(ephpm_kv_del_if_eq("k\0", 't'), ephpm_kv_get('k'));

echo "-- an expired entry never matches\n";
ephpm_kv_set('exp', 'tok');
ephpm_kv_pexpire('exp', 20);
usleep(50000);
var_dump(ephpm_kv_del_if_eq('exp', 'tok'));

echo "-- a lock replaced by another holder\n";
ephpm_kv_set('l', 'a', 30);
ephpm_kv_set('l', 'b', 30);
var_dump(ephpm_kv_del_if_eq('l', 'a'), ephpm_kv_get('l'));

echo "-- coercive mode: an int token\n";
ephpm_kv_set('n', '7');
var_dump(ephpm_kv_del_if_eq('n', 7));
?>
--EXPECT--
-- near misses
746f6b           false
746f6b00         false
746f6b0065       false
746f6b00656e00   false
544f4b00454e     false
746f6b00654e     false
746f6b20656e     false
746f6b656e       false
string(12) "746f6b00656e"
-- the exact bytes
bool(true)
-- a NUL in the key
bool(true)
string(1) "t"
-- an expired entry never matches
bool(false)
-- a lock replaced by another holder
bool(false)
string(1) "b"
-- coercive mode: an int token
bool(true)
