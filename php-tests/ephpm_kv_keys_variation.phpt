--TEST--
ephpm_kv_keys(): Redis glob patterns, binary keys, expired keys left out
--EXTENSIONS--
ephpm
--FILE--
<?php
$keys = ['hello', 'hallo', 'hxllo', 'hllo', 'heeello', 'Hello', 'h*llo', 'h?llo',
         'h[a]llo', 'a-b', 'abc', 'a1', "nul\0byte", 'x\\y'];
foreach ($keys as $k) ephpm_kv_set($k, 'v');

function show(string $pattern): void {
    $found = ephpm_kv_keys($pattern);
    sort($found, SORT_STRING);
    $text = fn($k) => str_replace("\0", '\0', $k);
    printf("%-12s %s\n", $text($pattern), $found ? implode(' ', array_map($text, $found)) : '(none)');
}

show('h?llo');
show('h*llo');
show('h[ae]llo');
show('h[^e]llo');
show('h[a-e]llo');
show('h[e-a]llo');      // a reversed range is read as [a-e]
show('[Hh]ello');
show('h\\*llo');        // an escaped * is a literal *
show('h\\?llo');
show('h\\[a]llo');
show('x\\\\y');         // an escaped backslash
show('a?');
show('a[0-9]');
show('a[-]b');
show('*c');
show("nul\0*");
show('nul?byte');
show('HELLO');
show('h');
show('*');

echo "-- expired keys are not listed\n";
ephpm_kv_pexpire('hello', 20);
usleep(50000);
show('he*');

echo "-- coercive mode\n";
ephpm_kv_set('10', 'v');
ephpm_kv_set('100', 'v');
$r = ephpm_kv_keys(10);
var_dump($r);
?>
--EXPECT--
h?llo        h*llo h?llo hallo hello hxllo
h*llo        h*llo h?llo h[a]llo hallo heeello hello hllo hxllo
h[ae]llo     hallo hello
h[^e]llo     h*llo h?llo hallo hxllo
h[a-e]llo    hallo hello
h[e-a]llo    hallo hello
[Hh]ello     Hello hello
h\*llo       h*llo
h\?llo       h?llo
h\[a]llo     h[a]llo
x\\y         x\y
a?           a1
a[0-9]       a1
a[-]b        a-b
*c           abc
nul\0*       nul\0byte
nul?byte     nul\0byte
HELLO        (none)
h            (none)
*            Hello a-b a1 abc h*llo h?llo h[a]llo hallo heeello hello hllo hxllo nul\0byte x\y
-- expired keys are not listed
he*          heeello
-- coercive mode
array(1) {
  [0]=>
  string(2) "10"
}
