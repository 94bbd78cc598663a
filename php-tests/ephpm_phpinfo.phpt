--TEST--
phpinfo(): the ephpm section shows the mode, the ops table and every INI entry
--EXTENSIONS--
ephpm
--INI--
ephpm.memory_limit=8M
--FILE--
<?php
function section(): string {
    ob_start();
    phpinfo(INFO_MODULES);
    $all = ob_get_clean();
    // the section runs from the "ephpm" heading to the next blank line after its INI table
    if (!preg_match('/^ephpm\n\n(.*?\nDirective => Local Value => Master Value\n.*?)\n\n/ms', $all, $m)) {
        return "no ephpm section\n";
    }
    return $m[1] . "\n";
}

echo section();
echo "-- after the first call the table in use is known\n";
ephpm_kv_set('k', 'v');
echo section();
?>
--EXPECTF--
ephpm support => enabled
Version => %d.%d.%s
Mode => standalone
Ops ABI version (extension) => %d
Ops table in use => none yet (made on first use)

Directive => Local Value => Master Value
ephpm.compression => off => off
ephpm.compression_level => 3 => 3
ephpm.compression_threshold => 1024 => 1024
ephpm.data_dir => no value => no value
ephpm.eviction_policy => noeviction => noeviction
ephpm.fsync => everysec => everysec
ephpm.max_value_size => 512M => 512M
ephpm.memory_limit => 8M => 8M
ephpm.persistence => off => off
ephpm.session_lock_backoff_max_ms => 100 => 100
ephpm.session_lock_backoff_min_ms => 10 => 10
ephpm.session_lock_failure => proceed => proceed
ephpm.session_lock_ttl_ms => 30000 => 30000
ephpm.session_lock_wait_ms => 30000 => 30000
ephpm.session_locking => On => On
ephpm.session_prefix => session => session
ephpm.shards => 64 => 64
-- after the first call the table in use is known
ephpm support => enabled
Version => %d.%d.%s
Mode => standalone
Ops ABI version (extension) => %d
Ops table in use => %d, %d bytes

Directive => Local Value => Master Value
ephpm.compression => off => off
ephpm.compression_level => 3 => 3
ephpm.compression_threshold => 1024 => 1024
ephpm.data_dir => no value => no value
ephpm.eviction_policy => noeviction => noeviction
ephpm.fsync => everysec => everysec
ephpm.max_value_size => 512M => 512M
ephpm.memory_limit => 8M => 8M
ephpm.persistence => off => off
ephpm.session_lock_backoff_max_ms => 100 => 100
ephpm.session_lock_backoff_min_ms => 10 => 10
ephpm.session_lock_failure => proceed => proceed
ephpm.session_lock_ttl_ms => 30000 => 30000
ephpm.session_lock_wait_ms => 30000 => 30000
ephpm.session_locking => On => On
ephpm.session_prefix => session => session
ephpm.shards => 64 => 64
