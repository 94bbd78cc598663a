<?php
// Loads Debian's Symfony 5.4 components and the test classes extracted from
// Debian's symfony source package (SYMFONY_TESTS_ROOT = its src/ directory).
require_once '/usr/share/php/Symfony/Component/Cache/autoload.php';
require_once '/usr/share/php/Symfony/Component/Lock/autoload.php';
require_once '/usr/share/php/Cache/IntegrationTests/autoload.php';

$root = getenv('SYMFONY_TESTS_ROOT');
if ($root === false || !is_dir($root)) {
    fwrite(STDERR, "SYMFONY_TESTS_ROOT must name the src/ directory of Debian's symfony source\n");
    exit(2);
}
spl_autoload_register(static function (string $class) use ($root): void {
    if (strncmp($class, 'Symfony\\Component\\', 18) !== 0 || strpos($class, '\\Tests\\') === false) {
        return;
    }
    $file = $root . '/' . str_replace('\\', '/', $class) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
