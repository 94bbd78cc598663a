<?php
// junit_compare.php NAME REDIS.xml EPHPM.xml
// Compares two PHPUnit JUnit logs of one suite test by test. Exit 0 when
// every test ended the same way on both servers and none failed or errored
// against ephpm; otherwise prints the differences and exits 1.

declare(strict_types=1);

function outcomes(string $file): array
{
    if (!is_file($file)) {
        fwrite(STDERR, "no JUnit log $file: PHPUnit did not run\n");
        exit(1);
    }
    $xml = simplexml_load_file($file);
    if ($xml === false) {
        fwrite(STDERR, "unreadable JUnit log $file\n");
        exit(1);
    }
    $out = [];
    foreach ($xml->xpath('//testcase') as $case) {
        $id = (string) $case['class'] . '::' . (string) $case['name'];
        $status = 'pass';
        $detail = '';
        foreach (['failure', 'error', 'skipped'] as $kind) {
            if (isset($case->$kind)) {
                $status = $kind;
                $detail = trim((string) $case->$kind);
                break;
            }
        }
        $out[$id] = [$status, $detail];
    }
    return $out;
}

[, $name, $redisLog, $ephpmLog] = $argv;
$redis = outcomes($redisLog);
$ephpm = outcomes($ephpmLog);
$bad = [];
foreach ($redis + $ephpm as $id => $_) {
    $r = $redis[$id][0] ?? 'missing';
    $e = $ephpm[$id][0] ?? 'missing';
    if ($r !== $e || $e === 'failure' || $e === 'error') {
        $bad[] = sprintf("  %s: redis-server %s, ephpm %s%s", $id, $r, $e,
                         isset($ephpm[$id]) && $ephpm[$id][1] !== ''
                             ? "\n    " . str_replace("\n", "\n    ", substr($ephpm[$id][1], 0, 600))
                             : '');
    }
}
$count = static fn (array $o, string $s) => count(array_filter($o, fn ($x) => $x[0] === $s));
printf("%s: %d tests; redis-server %d passed %d skipped; ephpm %d passed %d skipped\n",
       $name, count($ephpm), $count($redis, 'pass'), $count($redis, 'skipped'),
       $count($ephpm, 'pass'), $count($ephpm, 'skipped'));
if ($bad !== [] || $ephpm === []) {
    echo $ephpm === [] ? "  no tests ran against ephpm\n" : implode("\n", $bad) . "\n";
    exit(1);
}
