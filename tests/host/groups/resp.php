<?php
// The resp group: redis-cli (or the runner's RESP client) and PHP share one store.

declare(strict_types=1);

/** redis-cli and PHP see the same store. */
function group_resp(array $env): void
{
    $srv = Server::start($env['ephpm'], ['--docroot', $env['docroot']], true);
    $cli = find_redis_cli();
    if ($cli === null) {
        // Still a RESP client against PHP, only not Redis's own.
        echo "        note: redis-cli not found (apt-get install redis-tools): using the runner's RESP client\n";
        $conn = new Conn($srv->resp_port);
        $run = function (array $args) use ($conn): string {
            $args = array_values(array_filter($args, function ($a) {
                return $a !== '--raw';
            }));
            $reply = resp_command($conn, $args);
            if (is_array($reply)) {
                throw new RuntimeException(implode(' ', $args) . ': ' . show($reply));
            }
            return (string)$reply;
        };
    } else {
        $run = function (array $args) use ($cli, $srv): string {
            $cmd = array_merge([$cli, '-h', '127.0.0.1', '-p', (string)$srv->resp_port], $args);
            $p = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
            $out = stream_get_contents($pipes[1]);
            $err = stream_get_contents($pipes[2]);
            fclose($pipes[1]);
            fclose($pipes[2]);
            $code = proc_close($p);
            if ($code !== 0) {
                throw new RuntimeException('redis-cli ' . implode(' ', $args) . " exited $code: $err");
            }
            return rtrim($out, "\n");
        };
    }
    $key = 'interop:from-cli:' . bin2hex(random_bytes(4));
    check_eq('redis-cli SET', 'OK', $run(['SET', $key, 'hello from redis-cli', 'EX', '100']));
    $j = json_of(http($srv, 'GET', '/kv.php?op=get&k=' . rawurlencode($key)), 'kv get');
    check_eq('PHP reads the key redis-cli set', 'hello from redis-cli', $j['value']);
    check('PHP sees its TTL (<= 100 s)', $j['ttl'] > 90 && $j['ttl'] <= 100, show($j));

    $key2 = 'interop:from-php:' . bin2hex(random_bytes(4));
    $j = json_of(http($srv, 'GET', '/kv.php?op=set&k=' . rawurlencode($key2) . '&v=' . rawurlencode("set by PHP ü")), 'kv set');
    check_eq('PHP set', true, $j['ok']);
    check_eq('redis-cli GET reads what PHP set', "set by PHP ü", $run(['--raw', 'GET', $key2]));
    check_eq('redis-cli TTL of a key without expiry', '-1', $run(['TTL', $key2]));

    $n = 'interop:counter:' . bin2hex(random_bytes(4));
    $run(['INCRBY', $n, '40']);
    $j = json_of(http($srv, 'GET', '/kv.php?op=incr&k=' . rawurlencode($n)), 'kv incr');
    check_eq('PHP INCR on a redis-cli counter', 41, $j['value']);
    check_eq('redis-cli sees the increment', '41', $run(['GET', $n]));
    $srv->stop();
}

function find_redis_cli(): ?string
{
    foreach (explode(':', (string)getenv('PATH')) as $dir) {
        if ($dir !== '' && is_executable("$dir/redis-cli")) {
            return "$dir/redis-cli";
        }
    }
    return null;
}
