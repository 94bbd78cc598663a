--TEST--
INI: invalid ephpm.persistence and ephpm.fsync values are refused at startup with a warning and the defaults stay
--EXTENSIONS--
ephpm
--INI--
ephpm.persistence=rdb
ephpm.fsync=sometimes
--FILE--
<?php
var_dump(ini_get('ephpm.persistence'), ini_get('ephpm.data_dir'), ini_get('ephpm.fsync'));
var_dump(ephpm_kv_info()['persistence_enabled']);
?>
--EXPECT--
Warning: Invalid ephpm.persistence value "rdb": must be off or log; keeping the default in Unknown on line 0

Warning: Invalid ephpm.fsync value "sometimes": must be always, everysec or no; keeping the default in Unknown on line 0
string(3) "off"
string(0) ""
string(8) "everysec"
bool(false)
