<?php
// The scratch docroot the groups serve, and its removal.

declare(strict_types=1);

/**
 * A scratch copy of tests/host/docroot plus what must not live in the
 * repository: dotfiles, a .git directory, a symlink out of the root, a
 * binary image.  Returns [base, docroot (realpath)].
 */
function make_docroot(string $src): array
{
    $base = sys_get_temp_dir() . '/ephpm-host-' . bin2hex(random_bytes(6));
    mkdir("$base/root", 0755, true);
    mkdir("$base/outside");
    $it = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($src, FilesystemIterator::SKIP_DOTS),
        RecursiveIteratorIterator::SELF_FIRST);
    foreach ($it as $f) {
        $dest = "$base/root/" . substr($f->getPathname(), strlen($src) + 1);
        $f->isDir() ? mkdir($dest) : copy($f->getPathname(), $dest);
    }
    $root = realpath("$base/root");
    file_put_contents("$root/.env", "DB_PASSWORD=dotenv-secret\n");
    mkdir("$root/.git");
    file_put_contents("$root/.git/config", "[core]\n\tgitconfig-secret = 1\n");
    file_put_contents("$root/sub/.hidden", "hidden-secret\n");
    file_put_contents("$base/outside/secret.txt", "outside-secret\n");
    symlink('../outside/secret.txt', "$root/escape.txt");
    symlink('../outside', "$root/escape_dir");
    // A 1x1 PNG.
    file_put_contents("$root/pixel.png", base64_decode(
        'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='));
    return [$base, $root];
}

function remove_tree(string $dir): void
{
    if (!is_dir($dir) || is_link($dir)) {
        @unlink($dir);
        return;
    }
    foreach (scandir($dir) as $e) {
        if ($e !== '.' && $e !== '..') {
            remove_tree("$dir/$e");
        }
    }
    rmdir($dir);
}
