--TEST--
ephpm_kv_info(): the persistence figures, off and with a data dir, and what a restart loaded
--EXTENSIONS--
ephpm
--FILE--
<?php
require __DIR__ . '/persistence.inc';
echo "-- off\n";
$info = ephpm_kv_info();
foreach ($info as $name => $value) {
    if (str_starts_with($name, 'persistence_') || str_starts_with($name, 'aof_')) {
        printf("%-26s %s\n", $name, var_export($value, true));
    }
}

$dir = persist_temp_dir('info');
register_shutdown_function(fn() => persist_remove_tree($dir));
$ini = ['ephpm.persistence' => 'log', 'ephpm.data_dir' => "$dir/data", 'ephpm.fsync' => 'always'];
$figures = <<<'PHP'
$i = ephpm_kv_info();
printf("enabled=%s fsync=%s dir_ok=%s write_error=%s rewrite_ok=%s loaded_keys=%d\n",
       var_export($i['persistence_enabled'], true), $i['persistence_fsync'],
       var_export($i['persistence_data_dir'] === $argv_dir, true),
       var_export($i['persistence_write_error'], true),
       var_export($i['aof_last_rewrite_ok'], true), $i['aof_loaded_keys']);
PHP;
$written = <<<'PHP'
$i = ephpm_kv_info();
// fsync=always: each write waited for an fsync that covered it
printf("records>=3: %s fsyncs>0: %s commit_records>=3: %s\n",
       var_export($i['aof_records'] >= 3, true), var_export($i['aof_fsyncs'] > 0, true),
       var_export($i['aof_commit_records'] >= 3, true));
PHP;
$prefix = '$argv_dir = ' . var_export("$dir/data", true) . ';';

echo "-- a first process writes three keys\n";
[$code, $out, $err] = persist_run($ini, $prefix . '
    ephpm_kv_set("a", "1"); ephpm_kv_set("b", "2", 600); ephpm_kv_incr("c");' . $figures . $written);
echo $code, "\n", $out, $err;

echo "-- the next one loads them\n";
[$code, $out, $err] = persist_run($ini, $prefix . $figures . '
    var_dump(ephpm_kv_get("a"), ephpm_kv_ttl("b") > 590, ephpm_kv_get("c"));');
echo $code, "\n", $out, $err;
?>
--EXPECT--
-- off
persistence_enabled        false
persistence_fsync          ''
persistence_data_dir       ''
persistence_write_error    ''
aof_last_rewrite_error     ''
aof_rewrite_in_progress    false
aof_last_rewrite_ok        true
aof_rewrites               0
aof_last_save_unix         0
aof_current_size           0
aof_base_size              0
aof_buffered_bytes         0
aof_records                0
aof_write_calls            0
aof_fsyncs                 0
aof_commit_batches         0
aof_commit_records         0
aof_commit_max_batch       0
aof_loaded_records         0
aof_loaded_keys            0
aof_truncated_bytes        0
aof_load_ms                0
-- a first process writes three keys
0
enabled=true fsync=always dir_ok=true write_error='' rewrite_ok=true loaded_keys=0
records>=3: true fsyncs>0: true commit_records>=3: true
-- the next one loads them
0
enabled=true fsync=always dir_ok=true write_error='' rewrite_ok=true loaded_keys=3
string(1) "1"
bool(true)
string(1) "1"
