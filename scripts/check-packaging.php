<?php

declare(strict_types=1);

// Checks the two Composer manifests (scripts/check-packaging.sh runs this
// after `composer validate`):
//
//   php scripts/check-packaging.php REPO_ROOT
//
// - composer.json (the extension, for PIE): type php-ext and a php-ext
//   section that keeps to PIE's documented schema (php/pie's
//   resources/composer-json-php-ext-schema.json: the keys it defines, their
//   types and ranges), whose extension name is the one config.m4 enables and
//   ext/ registers, and whose configure-options are exactly config.m4's
//   options.  (Debian's Composer 2.5 predates php-ext and cannot check it.)
// - php/composer.json (the adapters): requires ext-ephpm, maps Ephpm\ to an
//   existing src/, every class file there declares the namespace and class
//   its path gives (PSR-4), and the Laravel provider it names exists.
//
// Prints every problem and exits 1 when there is one.

$root = $argv[1] ?? '';
if ($root === '' || !is_dir($root)) {
    fwrite(STDERR, "usage: php check-packaging.php REPO_ROOT\n");
    exit(2);
}
$problems = [];
$fail = static function (string $what) use (&$problems): void {
    $problems[] = $what;
};
$json = static function (string $file) use ($fail): array {
    $text = @file_get_contents($file);
    if ($text === false) {
        $fail("$file: cannot read");
        return [];
    }
    try {
        $data = json_decode($text, true, 64, JSON_THROW_ON_ERROR);
    } catch (JsonException $e) {
        $fail("$file: not JSON: " . $e->getMessage());
        return [];
    }
    return is_array($data) ? $data : [];
};

// --- the extension's manifest --------------------------------------------
$ext = $json("$root/composer.json");
if (($ext['type'] ?? null) !== 'php-ext') {
    $fail('composer.json: type must be "php-ext" (a PHP module for PIE)');
}
$section = $ext['php-ext'] ?? null;
if (!is_array($section)) {
    $fail('composer.json: no php-ext section');
    $section = [];
}
$known = ['extension-name', 'priority', 'support-zts', 'support-nts', 'build-path',
    'override-download-url-method', 'os-families', 'os-families-exclude', 'configure-options'];
foreach (array_keys($section) as $key) {
    if (!in_array($key, $known, true)) {
        $fail("composer.json: php-ext.$key is not in PIE's schema");
    }
}
$name = $section['extension-name'] ?? null;
if (!is_string($name) || $name === '') {
    $fail('composer.json: php-ext.extension-name must be a non-empty string');
    $name = '';
}
$name = preg_replace('/^ext-/', '', $name);
if (array_key_exists('priority', $section)) {
    $p = $section['priority'];
    if (!is_int($p) || $p < 10 || $p > 99) {
        $fail('composer.json: php-ext.priority must be an integer from 10 to 99');
    }
}
foreach (['support-zts', 'support-nts'] as $key) {
    if (array_key_exists($key, $section) && !is_bool($section[$key])) {
        $fail("composer.json: php-ext.$key must be a boolean");
    }
}
if (array_key_exists('build-path', $section) && !is_string($section['build-path']) && $section['build-path'] !== null) {
    $fail('composer.json: php-ext.build-path must be a string or null');
}
if (array_key_exists('override-download-url-method', $section)
    && !in_array($section['override-download-url-method'], ['composer-default', 'pre-packaged-source'], true)) {
    $fail('composer.json: php-ext.override-download-url-method must be composer-default or pre-packaged-source');
}
$families = ['windows', 'bsd', 'darwin', 'solaris', 'linux', 'unknown'];
foreach (['os-families', 'os-families-exclude'] as $key) {
    if (!array_key_exists($key, $section)) {
        continue;
    }
    $v = $section[$key];
    if (!is_array($v) || $v === [] || !array_is_list($v)) {
        $fail("composer.json: php-ext.$key must be a non-empty list");
        continue;
    }
    foreach ($v as $f) {
        if (!in_array($f, $families, true)) {
            $fail("composer.json: php-ext.$key: unknown OS family " . json_encode($f));
        }
    }
}
if (array_key_exists('os-families', $section) && array_key_exists('os-families-exclude', $section)) {
    $fail('composer.json: php-ext.os-families and os-families-exclude exclude each other');
}
$listed = [];
foreach ($section['configure-options'] ?? [] as $i => $opt) {
    if (!is_array($opt) || !is_string($opt['name'] ?? null)) {
        $fail("composer.json: php-ext.configure-options[$i] needs a string name");
        continue;
    }
    if (!preg_match('/^[a-zA-Z0-9][a-zA-Z0-9-_]*$/', $opt['name'])) {
        $fail("composer.json: configure option {$opt['name']}: not a valid flag name");
    }
    foreach (array_keys($opt) as $key) {
        if (!in_array($key, ['name', 'needs-value', 'description'], true)) {
            $fail("composer.json: configure option {$opt['name']}: $key is not in PIE's schema");
        }
    }
    if (array_key_exists('needs-value', $opt) && !is_bool($opt['needs-value'])) {
        $fail("composer.json: configure option {$opt['name']}: needs-value must be a boolean");
    }
    $listed[$opt['name']] = $opt['needs-value'] ?? false;
}

// config.m4's options: PHP_ARG_ENABLE([x] ...) is --enable-x, PHP_ARG_WITH
// is --with-x (a value).
$m4 = (string) @file_get_contents("$root/config.m4");
preg_match_all('/PHP_ARG_(ENABLE|WITH)\(\[?([A-Za-z0-9_-]+)\]?/', $m4, $m, PREG_SET_ORDER);
$options = [];
foreach ($m as [, $kind, $opt]) {
    $options[($kind === 'ENABLE' ? 'enable-' : 'with-') . $opt] = $kind === 'WITH';
}
if ($options === []) {
    $fail('config.m4: no PHP_ARG_ENABLE/PHP_ARG_WITH found');
}
foreach ($options as $opt => $needsValue) {
    if (!array_key_exists($opt, $listed)) {
        $fail("composer.json: config.m4's --$opt is not in php-ext.configure-options");
    } elseif ($listed[$opt] !== $needsValue) {
        $fail("composer.json: configure option $opt: needs-value should be " . var_export($needsValue, true));
    }
}
foreach (array_keys($listed) as $opt) {
    if (!array_key_exists($opt, $options)) {
        $fail("composer.json: configure option $opt is not one config.m4 has");
    }
}
if (!array_key_exists("enable-$name", $options)) {
    $fail("composer.json: extension-name \"$name\" is not the one config.m4 enables");
}
// The module's registered name (what extension_loaded() and PIE's check see).
$registered = '';
foreach (glob("$root/ext/*.c") as $c) {
    if (preg_match('/STANDARD_MODULE_HEADER[^"]*"([a-z0-9_]+)"/s', (string) file_get_contents($c), $mm)) {
        $registered = $mm[1];
        break;
    }
}
if ($registered !== $name) {
    $fail("composer.json: extension-name \"$name\" but ext/ registers \"$registered\"");
}

// --- the adapters' manifest ----------------------------------------------
$pkg = $json("$root/php/composer.json");
if (!array_key_exists('ext-' . $name, $pkg['require'] ?? [])) {
    $fail("php/composer.json: must require ext-$name");
}
$src = $pkg['autoload']['psr-4']['Ephpm\\'] ?? null;
if (!is_string($src) || !is_dir("$root/php/$src")) {
    $fail('php/composer.json: autoload.psr-4 must map Ephpm\\ to an existing directory');
} else {
    $base = realpath("$root/php/$src");
    $it = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($base, FilesystemIterator::SKIP_DOTS));
    foreach ($it as $file) {
        if ($file->getExtension() !== 'php') {
            continue;
        }
        $rel = substr($file->getPathname(), strlen($base) + 1, -4);
        $parts = explode('/', $rel);
        $class = array_pop($parts);
        $ns = implode('\\', array_merge(['Ephpm'], $parts));
        $code = (string) file_get_contents($file->getPathname());
        if (!preg_match('/^namespace\s+' . preg_quote($ns, '/') . '\s*;/m', $code)) {
            $fail("php/$src$rel.php: should declare namespace $ns (PSR-4)");
        }
        if (!preg_match('/^(final\s+|abstract\s+)?(class|interface|trait|enum)\s+' . preg_quote($class, '/') . '\b/m', $code)) {
            $fail("php/$src$rel.php: should declare $class (PSR-4)");
        }
    }
}
foreach ($pkg['extra']['laravel']['providers'] ?? [] as $provider) {
    $file = "$root/php/$src" . str_replace('\\', '/', substr($provider, strlen('Ephpm\\'))) . '.php';
    if (!is_file($file)) {
        $fail("php/composer.json: Laravel provider $provider has no file ($file)");
    }
}

if ($problems !== []) {
    echo implode("\n", $problems), "\n";
    exit(1);
}
echo "packaging: composer.json (php-ext \"$name\", options: ", implode(', ', array_keys($listed)),
    ") and php/composer.json agree with PIE's schema, config.m4 and php/src\n";
