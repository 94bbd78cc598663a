<?php

declare(strict_types=1);

// Served by the ephpm host in php/tests/run.sh's host mode: runs PHPUnit
// inside one HTTP request, so that the adapters are tested against the
// host's shared store and its PHP.  The request body is JSON: PHPUnit's
// argv and the environment the tests read.  PHPUnit's report is the reply
// (php://stdout is the response here; there is no STDERR constant outside
// the CLI); its last line is PHPUnit's exit code.

set_time_limit(0);
$request = json_decode((string) file_get_contents('php://input'), true, 8, JSON_THROW_ON_ERROR);
foreach ($request['env'] as $name => $value) {
    putenv($name . '=' . $value);
    $_ENV[$name] = $value;
}
$_SERVER['argv'] = $request['argv'];
$_SERVER['argc'] = \count($request['argv']);

if (!ini_get('date.timezone')) {
    ini_set('date.timezone', 'UTC');
}
define('PHPUNIT_COMPOSER_INSTALL', 'PHPUnit/Autoload.php');
require PHPUNIT_COMPOSER_INSTALL;

$code = PHPUnit\TextUI\Command::main(false);
echo "phpunit exit code: {$code}\n";
