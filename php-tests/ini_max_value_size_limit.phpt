--TEST--
INI: ephpm.max_value_size above 2G is refused at startup (an entry keeps a length in 32 bits)
--EXTENSIONS--
ephpm
--INI--
ephpm.max_value_size=3G
--FILE--
<?php
var_dump(ini_get('ephpm.max_value_size'), ephpm_kv_info()['max_value_size']);
?>
--EXPECTF--
Warning: Invalid ephpm.max_value_size value "3G": must be a positive size in bytes with an optional K, M or G suffix, at most 2G; keeping the default in Unknown on line 0
string(4) "512M"
int(536870912)
