<?php
// The check functions: each prints one ok/FAIL line and is counted for the summary.

declare(strict_types=1);

final class Checks
{
    public static int $passed = 0;
    public static array $failed = [];
    public static string $group = '';

    public static function record(string $name, bool $ok, string $detail = ''): bool
    {
        $full = self::$group . ': ' . $name;
        if ($ok) {
            self::$passed++;
            echo "ok    $full\n";
        } else {
            self::$failed[] = $full;
            echo "FAIL  $full\n";
            if ($detail !== '') {
                echo preg_replace('/^/m', '        ', rtrim($detail)), "\n";
            }
        }
        return $ok;
    }
}

function show($v): string
{
    if (is_string($v)) {
        $s = strlen($v) > 600 ? substr($v, 0, 600) . '... (' . strlen($v) . ' bytes)' : $v;
        return var_export($s, true);
    }
    return str_replace("\n", "\n  ", var_export($v, true));
}

function check(string $name, bool $ok, string $detail = ''): bool
{
    return Checks::record($name, $ok, $detail);
}

function check_eq(string $name, $expected, $actual): bool
{
    return Checks::record($name, $expected === $actual,
        "expected: " . show($expected) . "\nactual:   " . show($actual));
}

function check_contains(string $name, string $needle, string $haystack): bool
{
    return Checks::record($name, strpos($haystack, $needle) !== false,
        "expected to contain: " . show($needle) . "\nactual: " . show($haystack));
}

function check_not_contains(string $name, string $needle, string $haystack): bool
{
    return Checks::record($name, strpos($haystack, $needle) === false,
        "expected NOT to contain: " . show($needle) . "\nactual: " . show($haystack));
}
