--TEST--
ephpm_kv_setnx(): refused for memory (false + warning) is told apart from "already exists" (false, no warning)
--EXTENSIONS--
ephpm
--INI--
ephpm.memory_limit=2K
--FILE--
<?php
function attempt(string $key): void {
    error_clear_last();
    $created = @ephpm_kv_setnx($key, str_repeat('v', 100));
    $error = error_get_last();
    printf("%-9s created=%s warning=%s\n", $key, var_export($created, true),
           $error === null ? 'none' : ($error['type'] === E_WARNING ? $error['message'] : 'other'));
}

$n = 0;
while (@ephpm_kv_setnx("key$n", str_repeat('v', 100))) {
    if (++$n > 100) break;
}
var_dump($n > 0 && $n < 100);

attempt('key0');       // exists: false, no warning
attempt('fresh');      // no room: false, a warning naming the limit
var_dump(ephpm_kv_exists('fresh'));
var_dump(ephpm_kv_get('key0') === str_repeat('v', 100));

echo "-- the warning as displayed\n";
var_dump(ephpm_kv_setnx('fresh', str_repeat('v', 100)));
?>
--EXPECTF--
bool(true)
key0      created=false warning=none
fresh     created=false warning=ephpm_kv_setnx(): Out of memory: the store's memory limit of 2048 bytes (ephpm.memory_limit) is reached
bool(false)
bool(true)
-- the warning as displayed

Warning: ephpm_kv_setnx(): Out of memory: the store's memory limit of 2048 bytes (ephpm.memory_limit) is reached in %s on line %d
bool(false)
