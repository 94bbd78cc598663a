--TEST--
ephpm.persistence=log: PHP does not start without ephpm.data_dir, with a data dir that cannot be made, or with one another process holds
--EXTENSIONS--
ephpm
--FILE--
<?php
require __DIR__ . '/persistence.inc';
$base = persist_temp_dir('startup');
register_shutdown_function(fn() => persist_remove_tree($base));
$script = 'echo "the script ran\n";';
$show = function (array $r, string $base): void {
    [$code, $out, $err] = $r;
    echo 'exit code ', $code === 0 ? '0' : 'not 0', "\n";
    // CLI prints startup messages on stdout or stderr depending on its
    // settings: both are shown, the temporary path replaced.
    echo trim(str_replace($base, 'BASE', $out . $err)), "\n";
};

echo "-- persistence=log without a data dir\n";
$show(persist_run(['ephpm.persistence' => 'log'], $script), $base);

echo "-- a data dir that cannot be made (a file is in the way)\n";
file_put_contents("$base/file", "x");
$show(persist_run(['ephpm.persistence' => 'log', 'ephpm.data_dir' => "$base/file/data"], $script),
      $base);

echo "-- a data dir another process holds\n";
$ini = ['ephpm.persistence' => 'log', 'ephpm.data_dir' => "$base/data"];
$holder = persist_start($ini, 'ephpm_kv_set("k", "v"); echo "holding\n"; fgets(STDIN);');
echo $holder['line'], "\n";
$show(persist_run($ini, $script), $base);
echo 'holder exit code ', persist_finish($holder), "\n";

echo "-- once it is free, the next process starts and finds the data\n";
[$code, $out] = persist_run($ini, 'var_dump(ephpm_kv_get("k"));');
echo $code, ' ', $out;
?>
--EXPECTF--
-- persistence=log without a data dir
exit code not 0
%AWarning: ephpm: cannot start the store: ephpm.persistence=log needs ephpm.data_dir in Unknown on line 0
%AFatal error: Unable to start ephpm module in Unknown on line 0
-- a data dir that cannot be made (a file is in the way)
exit code not 0
%AWarning: ephpm: cannot start the store: %sBASE/file/data%s in Unknown on line 0
%AFatal error: Unable to start ephpm module in Unknown on line 0
-- a data dir another process holds
holding
exit code not 0
%AWarning: ephpm: cannot start the store: %sBASE/data%s in Unknown on line 0
%AFatal error: Unable to start ephpm module in Unknown on line 0
holder exit code 0
-- once it is free, the next process starts and finds the data
0 string(1) "v"
