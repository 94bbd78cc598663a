<?php
// Debian's phpredis against ephpm: the calls PHP applications make, with the
// exact values phpredis hands back.  Run by run_clients.sh, which sets
// EPHPM_HOST/EPHPM_PORT (and EPHPM_PASSWORD when ephpm has one).  Exits
// non-zero on any mismatch, after printing what differed.  (MULTI and
// pipelines are not supported by ephpm and not tested.)

$host = getenv('EPHPM_HOST') ?: '127.0.0.1';
$port = (int) getenv('EPHPM_PORT');
$password = (string) getenv('EPHPM_PASSWORD');
if ($port <= 0) {
    fwrite(STDERR, "run me through run_clients.sh (EPHPM_PORT is not set)\n");
    exit(2);
}

$checks = 0;
$failures = 0;

function check(string $what, $got, $want): void {
    global $checks, $failures;
    $checks++;
    if ($got !== $want) {
        $failures++;
        echo "FAIL $what\n  want: " . var_export($want, true) . "\n  got:  " . var_export($got, true) . "\n";
    }
}

function connect(): Redis {
    global $host, $port, $password;
    $r = new Redis();
    if (!$r->connect($host, $port, 5.0)) {
        echo "FAIL cannot connect to $host:$port\n";
        exit(1);
    }
    $r->setOption(Redis::OPT_READ_TIMEOUT, 5.0);
    if ($password !== '') {
        check('auth', $r->auth($password), true);
    }
    return $r;
}

// The last error reply.  phpredis 5.3.7 keeps the NUL that ends it in C.
function lastError(Redis $r) {
    $e = $r->getLastError();
    return $e === null ? null : rtrim($e, "\0");
}

// Runs $fn, returning its value or 'exception: <message>'.
function attempt(callable $fn) {
    try {
        return $fn();
    } catch (RedisException $e) {
        return 'exception: ' . $e->getMessage();
    }
}

try {
    if ($password !== '') {
        // Without AUTH every command is refused; a wrong password fails.
        $anon = new Redis();
        $anon->connect($host, $port, 5.0);
        // (phpredis throws for these two errors rather than returning false.)
        check('get before auth', attempt(fn () => $anon->get('k')),
              'exception: NOAUTH Authentication required.');
        check('wrong password', attempt(fn () => $anon->auth('not-' . $password)),
              'exception: WRONGPASS invalid username-password pair or user is disabled.');
        $anon->clearLastError();
        check('auth with user and password', $anon->auth(['default', $password]), true);
        check('get after auth', $anon->get('never-set'), false);
        check('no error after auth', lastError($anon), null);
        $anon->close();
    }

    $r = connect();
    check('flushAll', $r->flushAll(), true);
    check('ping', $r->ping(), true);
    check('ping with message', $r->ping('hi'), 'hi');
    check('echo', $r->echo('echo me'), 'echo me');

    // --- strings --------------------------------------------------------------
    check('set', $r->set('greeting', 'hello'), true);
    check('get', $r->get('greeting'), 'hello');
    check('get missing', $r->get('missing'), false);
    check('set nx on existing key', $r->set('greeting', 'x', ['nx']), false);
    check('set xx', $r->set('greeting', 'hello world', ['xx']), true);
    check('strlen', $r->strlen('greeting'), 11);
    check('append', $r->append('greeting', '!'), 12);
    check('getRange', $r->getRange('greeting', 0, 4), 'hello');
    check('setRange', $r->setRange('greeting', 6, 'WORLD'), 12);
    check('get after setRange', $r->get('greeting'), 'hello WORLD!');
    check('getSet', $r->getSet('greeting', 'bye'), 'hello WORLD!');
    check('get after getSet', $r->get('greeting'), 'bye');
    check('getSet on a missing key', $r->getSet('fresh', 'v'), false);
    check('setNx', $r->setnx('fresh', 'other'), false);
    check('exists', $r->exists('greeting', 'fresh', 'missing'), 2);
    check('type string', $r->type('greeting'), Redis::REDIS_STRING);
    check('type missing', $r->type('missing'), Redis::REDIS_NOT_FOUND);

    // --- counters -------------------------------------------------------------
    check('incr', $r->incr('counter'), 1);
    check('incr again', $r->incr('counter'), 2);
    check('incrBy', $r->incrBy('counter', 40), 42);
    check('decr', $r->decr('counter'), 41);
    check('decrBy', $r->decrBy('counter', 11), 30);
    check('incrByFloat', $r->incrByFloat('counter', 0.5), 30.5);
    check('incr on a float', $r->incr('counter'), false);
    check('error for incr on a float', lastError($r), 'ERR value is not an integer or out of range');
    $r->clearLastError();

    // --- binary values ----------------------------------------------------------
    $bin = "a\0b\r\n\xff\x00end";
    check('set binary', $r->set("bin\0key", $bin), true);
    check('get binary', $r->get("bin\0key"), $bin);
    check('strlen binary', $r->strlen("bin\0key"), strlen($bin));
    $big = str_repeat("\0\x01\x02\xfe", 256 * 1024);  // 1 MiB
    check('set 1 MiB', $r->set('big', $big), true);
    check('get 1 MiB', $r->get('big') === $big, true);

    // --- mSet / mGet ----------------------------------------------------------
    check('mSet', $r->mSet(['m:1' => 'one', 'm:2' => 'two', "m:\0" => "n\0l"]), true);
    check('mGet', $r->mGet(['m:1', 'missing', 'm:2', "m:\0"]), ['one', false, 'two', "n\0l"]);
    check('mSetNx refused', $r->msetnx(['m:1' => 'x', 'm:3' => 'y']), false);
    check('mSetNx', $r->msetnx(['m:3' => 'three', 'm:4' => 'four']), true);
    check('del several', $r->del('m:3', 'm:4', 'missing'), 2);
    check('unlink', $r->unlink('m:2'), 1);

    // --- expiry ---------------------------------------------------------------
    check('set with ex', $r->set('session', 'data', ['ex' => 100]), true);
    check('ttl', $r->ttl('session'), 100);
    check('expire', $r->expire('session', 500), true);
    check('ttl after expire', $r->ttl('session'), 500);
    $pttl = $r->pttl('session');
    check('pttl in range', $pttl > 499000 && $pttl <= 500000, true);
    check('persist', $r->persist('session'), true);
    check('ttl after persist', $r->ttl('session'), -1);
    check('ttl of a missing key', $r->ttl('missing'), -2);
    check('expire a missing key', $r->expire('missing', 10), false);
    check('setEx', $r->setEx('tmp', 60, 'v'), true);
    check('ttl after setEx', $r->ttl('tmp'), 60);
    check('pSetEx', $r->psetex('tmp', 1500, 'v'), true);
    $pttl = $r->pttl('tmp');
    check('pttl after pSetEx in range', $pttl > 1000 && $pttl <= 1500, true);
    check('expireAt in the past deletes', $r->expireAt('tmp', time() - 10), true);
    check('gone after expireAt', $r->exists('tmp'), 0);
    // A short expiry, really waited for.
    check('set px 100', $r->set('short', 'v', ['px' => 100]), true);
    usleep(250000);
    check('expired after 250 ms', $r->get('short'), false);

    // --- hashes ---------------------------------------------------------------
    check('hSet new', $r->hSet('user:1', 'name', 'Ada'), 1);
    check('hSet existing', $r->hSet('user:1', 'name', 'Ada L.'), 0);
    check('hMSet', $r->hMSet('user:1', ['lang' => 'C', 'bin' => "x\0y"]), true);
    check('hSetNx', $r->hSetNx('user:1', 'lang', 'PHP'), false);
    check('hGet', $r->hGet('user:1', 'name'), 'Ada L.');
    check('hGet missing field', $r->hGet('user:1', 'nope'), false);
    check('hIncrBy', $r->hIncrBy('user:1', 'visits', 5), 5);
    check('hIncrBy again', $r->hIncrBy('user:1', 'visits', -2), 3);
    check('hIncrByFloat', $r->hIncrByFloat('user:1', 'score', 1.25), 1.25);
    $all = $r->hGetAll('user:1');
    ksort($all);
    check('hGetAll', $all, ['bin' => "x\0y", 'lang' => 'C', 'name' => 'Ada L.', 'score' => '1.25',
                            'visits' => '3']);
    check('hMGet', $r->hMGet('user:1', ['name', 'nope', 'bin']),
          ['name' => 'Ada L.', 'nope' => false, 'bin' => "x\0y"]);
    check('hLen', $r->hLen('user:1'), 5);
    check('hExists', $r->hExists('user:1', 'lang'), true);
    check('hDel', $r->hDel('user:1', 'lang', 'nope'), 1);
    check('hExists after hDel', $r->hExists('user:1', 'lang'), false);
    check('hStrLen', $r->hStrLen('user:1', 'bin'), 3);
    $keys = $r->hKeys('user:1');
    sort($keys);
    check('hKeys', $keys, ['bin', 'name', 'score', 'visits']);
    check('type hash', $r->type('user:1'), Redis::REDIS_HASH);
    check('get on a hash', $r->get('user:1'), false);
    check('error for get on a hash', lastError($r),
          'WRONGTYPE Operation against a key holding the wrong kind of value');
    $r->clearLastError();
    check('hGetAll missing', $r->hGetAll('missing'), []);

    // --- scan with an iterator ---------------------------------------------------
    $want = [];
    for ($i = 0; $i < 120; $i++) {
        $want[] = sprintf('scan:%03d', $i);
    }
    check('mSet scan keys', $r->mSet(array_fill_keys($want, 'v')), true);
    $r->setOption(Redis::OPT_SCAN, Redis::SCAN_RETRY);
    $seen = [];
    $it = null;
    $steps = 0;
    while (($batch = $r->scan($it, 'scan:*', 20)) !== false) {
        foreach ($batch as $k) {
            $seen[] = $k;
        }
        if (++$steps > 1000) {
            break;
        }
    }
    sort($seen);
    check('scan visits every key once', $seen, $want);
    check('scan ends with iterator 0', $it, 0);
    $r->setOption(Redis::OPT_SCAN, Redis::SCAN_NORETRY);
    $seen = [];
    $it = null;
    do {
        $batch = $r->scan($it, 'scan:01*');
        if ($batch !== false) {
            $seen = array_merge($seen, $batch);
        }
    } while ($it > 0);
    sort($seen);
    check('scan without retry', $seen, array_slice($want, 10, 10));
    $hseen = [];
    $it = null;
    while (($batch = $r->hScan('user:1', $it)) !== false) {
        $hseen += $batch;
        if ($it === 0) {
            break;
        }
    }
    ksort($hseen);
    check('hScan', $hseen, ['bin' => "x\0y", 'name' => 'Ada L.', 'score' => '1.25', 'visits' => '3']);
    $k = $r->keys('scan:11*');
    sort($k);
    check('keys', $k, array_slice($want, 110, 10));
    check('dbSize', $r->dbSize(), 129);

    // --- rawCommand ----------------------------------------------------------------
    check('rawCommand SET', $r->rawCommand('SET', 'raw', "r\0w"), true);
    check('rawCommand GET', $r->rawCommand('GET', 'raw'), "r\0w");
    check('rawCommand INCR', $r->rawCommand('INCRBY', 'rawn', '7'), 7);
    check('rawCommand MGET', $r->rawCommand('MGET', 'raw', 'missing'), ["r\0w", false]);
    check('rawCommand DELIFEQ mismatch', $r->rawCommand('DELIFEQ', 'raw', 'other'), 0);
    check('rawCommand DELIFEQ match', $r->rawCommand('DELIFEQ', 'raw', "r\0w"), 1);
    check('rawCommand DELIFEQ missing', $r->rawCommand('DELIFEQ', 'raw', "r\0w"), 0);
    check('rawCommand unknown', $r->rawCommand('NOSUCH'), false);
    check('error for an unknown command', lastError($r),
          "ERR unknown command 'NOSUCH', with args beginning with: ");
    $r->clearLastError();

    // --- the design note's lock scenario, with real time ----------------------------
    // A takes the lock for 200 ms and stalls past it; B takes it; A releases.
    foreach (['DELIFEQ', 'DEL'] as $release) {
        $a = connect();
        $b = connect();
        $c = connect();
        check("$release: A acquires", $a->set('lock', 'a', ['nx', 'px' => 200]), true);
        check("$release: B refused while A holds it", $b->set('lock', 'B', ['nx', 'px' => 30000]), false);
        usleep(300000);
        check("$release: B acquires after A's TTL", $b->set('lock', 'B', ['nx', 'px' => 30000]), true);
        if ($release === 'DELIFEQ') {
            check('DELIFEQ: A releases, deleting nothing', $a->rawCommand('DELIFEQ', 'lock', 'a'), 0);
            check('DELIFEQ: C is refused', $c->set('lock', 'c', ['nx', 'px' => 30000]), false);
            check('DELIFEQ: B still holds the lock', $c->get('lock'), 'B');
            check('DELIFEQ: B releases', $b->rawCommand('DELIFEQ', 'lock', 'B'), 1);
        } else {
            check("DEL: A's release deletes B's lock", $a->del('lock'), 1);
            check('DEL: C acquires while B thinks it holds it', $c->set('lock', 'c', ['nx', 'px' => 30000]), true);
            check('DEL: C holds the lock', $b->get('lock'), 'c');
            check('DEL: cleanup', $c->del('lock'), 1);
        }
        $a->close();
        $b->close();
        $c->close();
    }

    // --- connection ---------------------------------------------------------------
    check('select 0', $r->select(0), true);
    check('client setname', $r->client('setname', 'phpredis-test'), true);
    check('client getname', $r->client('getname'), 'phpredis-test');
    check('info has the version', ($r->info('server'))['redis_version'] ?? null, '7.0.15');
    check('rename', $r->rename('counter', 'counter2'), true);
    check('get renamed', $r->get('counter2'), '30.5');
    check('flushDb', $r->flushDb(), true);
    check('dbSize after flushDb', $r->dbSize(), 0);
    $r->close();
} catch (Throwable $e) {
    $failures++;
    echo 'FAIL unexpected ' . get_class($e) . ': ' . $e->getMessage() . "\n" . $e->getTraceAsString() . "\n";
}

echo "phpredis " . phpversion('redis') . ": $checks checks, $failures failed\n";
exit($failures === 0 ? 0 : 1);
