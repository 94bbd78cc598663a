<?php
// The scratch docroot the groups serve, and its removal.

declare(strict_types=1);

/**
 * A scratch copy of tests/host/docroot plus what must not live in the
 * repository: dotfiles, a .git directory, symlinks out of the root, a
 * binary image.  Returns [base, docroot (realpath)].
 *
 * Out of the root, as Debian's DokuWiki keeps lib/tpl:
 *   root/lib/tpl -> ../../outside/tpl      images/logo.png show.php part.php .hidden
 *   root/.tpl-dot -> ../outside/tpl        (a symlink with a dot name)
 *   root/lib/dot-target.txt -> ../../outside/.env-outside
 *   root/inside-link.txt -> readme.txt     (stays inside)
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
    mkdir("$base/outside/tpl/images", 0755, true);
    file_put_contents("$base/outside/tpl/show.php", '<?php header("Content-Type: application/json");
echo json_encode(["who" => "tpl show", "part" => include __DIR__ . "/part.php",
    "script_name" => $_SERVER["SCRIPT_NAME"], "script_filename" => $_SERVER["SCRIPT_FILENAME"],
    "path_info" => $_SERVER["PATH_INFO"] ?? null]);
');
    file_put_contents("$base/outside/tpl/part.php", "<?php return 'part ok';\n");
    file_put_contents("$base/outside/tpl/.hidden", "tpl-hidden-secret\n");
    file_put_contents("$base/outside/.env-outside", "outside-dot-secret\n");
    mkdir("$root/lib");
    symlink('../../outside/tpl', "$root/lib/tpl");
    symlink('../outside/tpl', "$root/.tpl-dot");
    symlink('../../outside/.env-outside', "$root/lib/dot-target.txt");
    symlink('readme.txt', "$root/inside-link.txt");
    // A 1x1 PNG.
    file_put_contents("$root/pixel.png", base64_decode(
        'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='));
    copy("$root/pixel.png", "$base/outside/tpl/images/logo.png");
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
