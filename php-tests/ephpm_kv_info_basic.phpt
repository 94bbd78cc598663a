--TEST--
ephpm_kv_info(): every figure, and how hits, misses, keys and memory_used move
--EXTENSIONS--
ephpm
--FILE--
<?php
$start = ephpm_kv_info();
foreach ($start as $name => $value) {
    printf("%-26s %s\n", $name, get_debug_type($value));
}
var_dump($start['keys'], $start['memory_used'], $start['memory_limit'], $start['max_value_size'],
         $start['hits'], $start['misses'], $start['expired'], $start['evicted'],
         $start['compressed_values'], $start['compression_ratio'], $start['mode']);

echo "-- one key\n";
ephpm_kv_set('a', str_repeat('x', 100));
$one = ephpm_kv_info();
var_dump($one['keys'], $one['memory_used'] > 100);

echo "-- the same key with 100 more bytes: its buffer, a malloc chunk of exactly its size, grows from 112 to 208\n";
ephpm_kv_set('a', str_repeat('x', 200));
var_dump(ephpm_kv_info()['memory_used'] - $one['memory_used']);

echo "-- a second key\n";
ephpm_kv_set('b', 'y', 60);
$two = ephpm_kv_info();
var_dump($two['keys'], $two['memory_used'] > $one['memory_used'] + 100);

echo "-- hits and misses come from reads\n";
ephpm_kv_get('a');
ephpm_kv_get('a');
ephpm_kv_get('b');
ephpm_kv_get('nope');
$reads = ephpm_kv_info();
var_dump($reads['hits'], $reads['misses']);

echo "-- deleting everything gives all memory back\n";
ephpm_kv_del('a');
var_dump(ephpm_kv_info()['keys']);
ephpm_kv_del_if_eq('b', 'y');
$end = ephpm_kv_info();
var_dump($end['keys'], $end['memory_used'] === $start['memory_used']);
var_dump($end['hits'], $end['misses']);
?>
--EXPECT--
keys                       int
memory_used                int
memory_limit               int
max_value_size             int
hits                       int
misses                     int
expired                    int
evicted                    int
compressed_values          int
compressed_original_bytes  int
compressed_stored_bytes    int
compression_ratio          float
pinned_keys                int
pinned_bytes               int
mode                       string
session_lock_acquired      int
session_lock_waits         int
session_lock_timeouts      int
session_stale_releases_refused int
session_fenced_writes_refused int
persistence_enabled        bool
persistence_fsync          string
persistence_data_dir       string
persistence_write_error    string
aof_last_rewrite_error     string
aof_rewrite_in_progress    bool
aof_last_rewrite_ok        bool
aof_rewrites               int
aof_last_save_unix         int
aof_current_size           int
aof_base_size              int
aof_buffered_bytes         int
aof_records                int
aof_write_calls            int
aof_fsyncs                 int
aof_commit_batches         int
aof_commit_records         int
aof_commit_max_batch       int
aof_loaded_records         int
aof_loaded_keys            int
aof_truncated_bytes        int
aof_load_ms                int
cluster                    null
int(0)
int(0)
int(0)
int(536870912)
int(0)
int(0)
int(0)
int(0)
int(0)
float(1)
string(10) "standalone"
-- one key
int(1)
bool(true)
-- the same key with 100 more bytes: its buffer, a malloc chunk of exactly its size, grows from 112 to 208
int(96)
-- a second key
int(2)
bool(true)
-- hits and misses come from reads
int(3)
int(1)
-- deleting everything gives all memory back
int(1)
int(0)
bool(true)
int(3)
int(1)
