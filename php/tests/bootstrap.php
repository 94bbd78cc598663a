<?php

declare(strict_types=1);

// PHPUnit bootstrap of the adapters' tests (php/tests/run.sh), the same in
// the CLI (standalone store) and inside the ephpm host: the package's own
// PSR-4 autoloading as composer.json declares it, Debian's autoloaders for
// the frameworks, and, when SYMFONY_TESTS_ROOT names the src/ directory of
// Debian's symfony source package (fetched at test time, never copied into
// the repository), Symfony's own test classes.

$ephpmPhpRoot = \dirname(__DIR__);
spl_autoload_register(static function (string $class) use ($ephpmPhpRoot): void {
    foreach (['Ephpm\\Tests\\' => '/tests/', 'Ephpm\\' => '/src/'] as $prefix => $dir) {
        if (strncmp($class, $prefix, \strlen($prefix)) === 0) {
            $file = $ephpmPhpRoot . $dir . str_replace('\\', '/', substr($class, \strlen($prefix))) . '.php';
            if (is_file($file)) {
                require $file;
            }
            return;
        }
    }
});

foreach ([
    '/usr/share/php/Symfony/Component/Lock/autoload.php',
    '/usr/share/php/Symfony/Component/Cache/autoload.php',
    '/usr/share/php/Illuminate/Cache/autoload.php',
    '/usr/share/php/Illuminate/Container/autoload.php',
    '/usr/share/php/Illuminate/Support/autoload.php',
    '/usr/share/php/Psr/SimpleCache/autoload.php',
    '/usr/share/php/Cache/IntegrationTests/autoload.php',
] as $autoload) {
    if (is_file($autoload)) {
        require_once $autoload;
    }
}

$symfonyTests = getenv('SYMFONY_TESTS_ROOT');
if (\is_string($symfonyTests) && $symfonyTests !== '') {
    spl_autoload_register(static function (string $class) use ($symfonyTests): void {
        if (strncmp($class, 'Symfony\\Component\\', 18) !== 0 || !str_contains($class, '\\Tests\\')) {
            return;
        }
        $file = $symfonyTests . '/' . str_replace('\\', '/', $class) . '.php';
        if (is_file($file)) {
            require $file;
        }
    });
}
