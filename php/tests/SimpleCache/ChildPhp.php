<?php

declare(strict_types=1);

namespace Ephpm\Tests\SimpleCache;

/**
 * Runs PHP code in a child CLI PHP started with -n (no php.ini): the PHP
 * run.sh names in EPHPM_TEST_PHP, with the extension of EPHPM_TEST_EXTENSION
 * only when asked, so a test can see the adapters in a PHP without the
 * extension or with other ephpm.* settings.
 */
final class ChildPhp
{
    /**
     * @param string[] $ini "name=value" settings (-d)
     *
     * @return array{int, string, string} exit code, stdout, stderr
     */
    public static function run(string $code, bool $withExtension, array $ini = []): array
    {
        $php = getenv('EPHPM_TEST_PHP');
        $ext = getenv('EPHPM_TEST_EXTENSION');
        if (!\is_string($php) || $php === '' || !\is_string($ext) || $ext === '') {
            throw new \RuntimeException('EPHPM_TEST_PHP and EPHPM_TEST_EXTENSION are not set: run the tests with php/tests/run.sh');
        }
        $cmd = [$php, '-n', '-d', 'include_path=.:/usr/share/php'];
        if ($withExtension) {
            array_push($cmd, '-d', 'extension=' . $ext);
        }
        foreach ($ini as $setting) {
            array_push($cmd, '-d', $setting);
        }
        $bootstrap = var_export(\dirname(__DIR__) . '/bootstrap.php', true);
        array_push($cmd, '-r', "require {$bootstrap};\n" . $code);
        $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        if (!\is_resource($proc)) {
            throw new \RuntimeException('Could not start ' . $php);
        }
        $out = (string) stream_get_contents($pipes[1]);
        $err = (string) stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        return [proc_close($proc), $out, $err];
    }
}
