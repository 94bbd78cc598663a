--TEST--
ephpm_kv_mget(): keys of any array, binary keys, expired entries, many keys
--EXTENSIONS--
ephpm
--INI--
ephpm.compression=zstd
ephpm.compression_threshold=64
--FILE--
<?php
ephpm_kv_set('x', 'X');
ephpm_kv_set("x\0", 'X0');
ephpm_kv_set('7', 'seven');

echo "-- array keys are ignored: the result is a list in iteration order\n";
var_dump(ephpm_kv_mget(['second' => 'x', 10 => 'missing', -3 => "x\0"]));

echo "-- coercive mode: elements convert as string parameters do\n";
var_dump(ephpm_kv_mget([7, '7']));
ephpm_kv_set('1.5', 'float');
ephpm_kv_set('1', 'true');
class Name { function __toString(): string { return '7'; } }
$arr = [1.5, true, new Name];
var_dump(ephpm_kv_mget($arr));
var_dump(get_debug_type($arr[0]), get_debug_type($arr[1]));  // the caller's array is unchanged

echo "-- references are followed\n";
$key = 'x';
$keys = [&$key];
var_dump(ephpm_kv_mget($keys));

echo "-- expired and deleted entries are null\n";
ephpm_kv_set('e', 'E');
ephpm_kv_pexpire('e', 20);
ephpm_kv_set('d', 'D');
ephpm_kv_del('d');
usleep(50000);
var_dump(ephpm_kv_mget(['e', 'd', 'x']));

echo "-- compressed values come back whole\n";
$big = str_repeat('0123456789', 1000);
ephpm_kv_set('big', $big);
var_dump(ephpm_kv_info()['compressed_values']);
$r = ephpm_kv_mget(['big', 'x', 'big']);
var_dump($r[0] === $big, $r[1], $r[2] === $big);

echo "-- 1000 keys, every other one missing\n";
$keys = [];
for ($i = 0; $i < 1000; $i++) {
    if ($i % 2 == 0) ephpm_kv_set("many:$i", "v$i");
    $keys[] = "many:$i";
}
$r = ephpm_kv_mget($keys);
$ok = count($r) === 1000;
foreach ($r as $i => $v) {
    $ok = $ok && $v === ($i % 2 == 0 ? "v$i" : null);
}
var_dump($ok);

echo "-- mget counts hits and misses like get\n";
ephpm_kv_flush_all();
$before = ephpm_kv_info();
ephpm_kv_set('h', 'v');
ephpm_kv_mget(['h', 'nope', 'h']);
$after = ephpm_kv_info();
var_dump($after['hits'] - $before['hits'], $after['misses'] - $before['misses']);
?>
--EXPECT--
-- array keys are ignored: the result is a list in iteration order
array(3) {
  [0]=>
  string(1) "X"
  [1]=>
  NULL
  [2]=>
  string(2) "X0"
}
-- coercive mode: elements convert as string parameters do
array(2) {
  [0]=>
  string(5) "seven"
  [1]=>
  string(5) "seven"
}
array(3) {
  [0]=>
  string(5) "float"
  [1]=>
  string(4) "true"
  [2]=>
  string(5) "seven"
}
string(5) "float"
string(4) "bool"
-- references are followed
array(1) {
  [0]=>
  string(1) "X"
}
-- expired and deleted entries are null
array(3) {
  [0]=>
  NULL
  [1]=>
  NULL
  [2]=>
  string(1) "X"
}
-- compressed values come back whole
int(1)
bool(true)
string(1) "X"
bool(true)
-- 1000 keys, every other one missing
bool(true)
-- mget counts hits and misses like get
int(2)
int(1)
