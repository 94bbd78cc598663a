<?php

declare(strict_types=1);

namespace Ephpm\Tests\Symfony;

use Ephpm\Symfony\Cache\EphpmAdapter;
use PHPUnit\Framework\TestCase;
use Psr\Log\AbstractLogger;
use Symfony\Component\Cache\Adapter\TagAwareAdapter;
use Symfony\Component\Cache\Exception\InvalidArgumentException;
use Symfony\Component\Cache\PruneableInterface;

/**
 * What Symfony's adapter contract does not check: clear() stays inside its
 * namespace, an item the store or the marshaller refuses fails save() and
 * leaves no stale value behind, and every error a user can run into.
 */
final class EphpmAdapterGuaranteesTest extends TestCase
{
    private const PREFIX = 'test-cache:';

    private static function logger(): AbstractLogger
    {
        return new class () extends AbstractLogger {
            /** @var list<string> */
            public array $messages = [];

            public function log($level, $message, array $context = []): void
            {
                $this->messages[] = $level . ': ' . $message;
            }
        };
    }

    public function testClearStaysInsideItsNamespace(): void
    {
        $ns = uniqid('clear', false);
        $a = new EphpmAdapter($ns . 'a', 0, null, self::PREFIX);
        $ab = new EphpmAdapter($ns . 'ab', 0, null, self::PREFIX);
        $b = new EphpmAdapter($ns . 'b', 0, null, self::PREFIX);
        foreach ([$a, $ab, $b] as $pool) {
            $this->assertTrue($pool->save($pool->getItem('k')->set('v')));
        }
        $this->assertTrue(ephpm_kv_set($ns . 'a:app-key', 'mine'));
        $this->assertTrue(ephpm_kv_set(self::PREFIX . 'other-app-key', 'mine'));

        $this->assertTrue($a->clear());
        $this->assertFalse($a->getItem('k')->isHit());
        $this->assertTrue($ab->getItem('k')->isHit(), 'clearing "a" cleared "ab"');
        $this->assertTrue($b->getItem('k')->isHit());
        $this->assertSame('mine', ephpm_kv_get($ns . 'a:app-key'));
        $this->assertSame('mine', ephpm_kv_get(self::PREFIX . 'other-app-key'));
        ephpm_kv_del($ns . 'a:app-key');
        ephpm_kv_del(self::PREFIX . 'other-app-key');
        $ab->clear();
        $b->clear();
    }

    public function testClearQuotesTheNamespaceForTheStoresGlob(): void
    {
        $ns = uniqid('glob', false);
        $star = new EphpmAdapter($ns . '*', 0, null, self::PREFIX);
        $plain = new EphpmAdapter($ns . 'x', 0, null, self::PREFIX);
        $range = new EphpmAdapter($ns . '[xy]', 0, null, self::PREFIX);
        $this->assertTrue($plain->save($plain->getItem('k')->set('v')));
        $this->assertTrue($star->save($star->getItem('k')->set('v')));
        $this->assertTrue($range->save($range->getItem('k')->set('v')));

        $this->assertTrue($star->clear());
        $this->assertTrue($range->clear());
        $this->assertFalse($star->getItem('k')->isHit());
        $this->assertFalse($range->getItem('k')->isHit());
        $this->assertTrue($plain->getItem('k')->isHit(), 'a glob character in the namespace reached another');
        $plain->clear();
    }

    public function testClearWithAPrefixKeepsTheRestOfTheNamespace(): void
    {
        $pool = new EphpmAdapter(uniqid('prefix', false), 0, null, self::PREFIX);
        $pool->save($pool->getItem('user.1')->set(1));
        $pool->save($pool->getItem('post.1')->set(2));
        $this->assertTrue($pool->clear('user.'));
        $this->assertFalse($pool->getItem('user.1')->isHit());
        $this->assertTrue($pool->getItem('post.1')->isHit());
        $pool->clear();
    }

    public function testTheEmptyNamespaceClearsOnlyUnderTheKeyPrefix(): void
    {
        $prefix = uniqid('test-cache-empty', false) . ':';
        $pool = new EphpmAdapter('', 0, null, $prefix);
        $pool->save($pool->getItem('k')->set('v'));
        $this->assertSame(1, \count(ephpm_kv_keys($prefix . '*')));
        $this->assertTrue(ephpm_kv_set('x' . $prefix, 'app'));
        $this->assertTrue($pool->clear());
        $this->assertSame([], ephpm_kv_keys($prefix . '*'));
        $this->assertSame('app', ephpm_kv_get('x' . $prefix));
        ephpm_kv_del('x' . $prefix);
    }

    public function testAValueTheMarshallerRefusesFailsAndLeavesNoStaleValue(): void
    {
        $pool = new EphpmAdapter(uniqid('marshal', false), 0, null, self::PREFIX);
        $pool->setLogger($logger = self::logger());
        $this->assertTrue($pool->save($pool->getItem('k')->set('old')));
        $this->assertFalse($pool->save($pool->getItem('k')->set(static fn () => 1)));
        $this->assertFalse($pool->getItem('k')->isHit(), 'the old value is still served');
        $this->assertNotSame([], $logger->messages);
    }

    public function testAnItemsLifetimeBecomesTheStoresTtl(): void
    {
        $pool = new EphpmAdapter(uniqid('ttl', false), 0, null, self::PREFIX);
        $pool->save($pool->getItem('k')->set('v')->expiresAfter(100));
        $pool->save($pool->getItem('forever')->set('v'));
        [$k] = ephpm_kv_keys(self::PREFIX . '*ttl*:k');
        [$forever] = ephpm_kv_keys(self::PREFIX . '*ttl*:forever');
        $this->assertGreaterThan(98, ephpm_kv_ttl($k));
        $this->assertLessThanOrEqual(100, ephpm_kv_ttl($k));
        $this->assertSame(-1, ephpm_kv_ttl($forever));
        // Past the store's longest TTL: kept (for ages), not refused.
        $this->assertTrue($pool->save($pool->getItem('k')->set('w')->expiresAt(new \DateTimeImmutable('@' . \PHP_INT_MAX))));
        $this->assertSame('w', $pool->getItem('k')->get());
        $pool->clear();
    }

    public function testKeysTooLongForTheStoreAreHashedToFit(): void
    {
        $pool = new EphpmAdapter(uniqid('long', false), 0, null, self::PREFIX);
        $long = str_repeat('k', 70000);
        $this->assertTrue($pool->save($pool->getItem($long)->set('v')));
        $this->assertSame('v', $pool->getItem($long)->get());
        $this->assertFalse($pool->getItem(str_repeat('k', 69999))->isHit());
        $this->assertTrue($pool->deleteItem($long));
        $this->assertFalse($pool->getItem($long)->isHit());
    }

    public function testNotPruneable(): void
    {
        $this->assertNotInstanceOf(PruneableInterface::class, new EphpmAdapter());
    }

    public function testAnEmptyOrOverlongKeyPrefixIsRefused(): void
    {
        foreach (['', str_repeat('p', 64513)] as $prefix) {
            try {
                new EphpmAdapter('ns', 0, null, $prefix);
                $this->fail('took a key prefix of ' . \strlen($prefix) . ' bytes');
            } catch (InvalidArgumentException $e) {
                $this->assertStringContainsString('key prefix', $e->getMessage());
            }
        }
        $this->assertInstanceOf(EphpmAdapter::class, new EphpmAdapter('ns', 0, null, str_repeat('p', 64512)));
    }

    public function testAnInvalidNamespaceIsRefused(): void
    {
        $this->expectException(InvalidArgumentException::class);
        new EphpmAdapter('a:b');
    }

    public function testAValueOverTheStoresMaxSizeFailsTheSaveAndLeavesNoStaleValue(): void
    {
        [$rc, $out, $err] = Harness::runPhp(<<<'PHP'
            $logger = new class () extends Psr\Log\AbstractLogger {
                public function log($level, $message, array $context = []): void
                {
                    echo "log $level: ", strtr($message, ['{key}' => $context['key'] ?? '']), "\n";
                }
            };
            $pool = new Ephpm\Symfony\Cache\EphpmAdapter('ns');
            $pool->setLogger($logger);
            var_export($pool->save($pool->getItem('k')->set('small')));
            echo "\n";
            var_export($pool->save($pool->getItem('k')->set(str_repeat('x', 5000))));
            echo "\n";
            var_export($pool->getItem('k')->isHit());
            echo "\n";
            var_export(ephpm_kv_exists('sf-cache:ns:k'));
            echo "\n";
            // A batch: the small item lands, the big one fails alone.
            $pool->saveDeferred($pool->getItem('a')->set('small'));
            $pool->saveDeferred($pool->getItem('b')->set(str_repeat('x', 5000)));
            var_export($pool->commit());
            echo "\n";
            var_export([$pool->getItem('a')->isHit(), $pool->getItem('b')->isHit()]);
            echo "\n";
            PHP, ['ephpm.max_value_size' => '1K']);
        $this->assertSame(0, $rc, $err . $out);
        $lines = explode("\n", trim($out));
        $logs = array_values(array_filter($lines, static fn (string $l): bool => str_starts_with($l, 'log ')));
        $results = array_values(array_filter($lines, static fn (string $l): bool => !str_starts_with($l, 'log ')));
        $this->assertSame(['true', 'false', 'false', 'false', 'false', 'array (', '  0 => true,', '  1 => false,', ')'], $results);
        $this->assertStringStartsWith('log warning: Failed to save key "ns:k": Saving an item: ', $logs[0]);
        $this->assertStringContainsString('ephpm.max_value_size', $logs[0]);
        $this->assertNotSame([], preg_grep('/^log warning: Failed to save key "ns:b": .*ephpm\.max_value_size/', $logs));
    }

    public function testAStoreOutOfMemoryFailsTheSaveAndLeavesNoStaleValue(): void
    {
        [$rc, $out, $err] = Harness::runPhp(<<<'PHP'
            $pool = new Ephpm\Symfony\Cache\EphpmAdapter('ns');
            $pool->setLogger(new class () extends Psr\Log\AbstractLogger {
                public function log($level, $message, array $context = []): void
                {
                    echo "log: $message\n";
                }
            });
            var_export($pool->save($pool->getItem('k')->set('old')));
            echo "\n";
            for ($i = 0; @ephpm_kv_set("fill:$i", str_repeat('x', 4096)); $i++);
            var_export($pool->save($pool->getItem('k')->set(str_repeat('y', 100000))));
            echo "\n";
            var_export($pool->getItem('k')->isHit());
            echo "\n";
            PHP, ['ephpm.memory_limit' => '1M']);
        $this->assertSame(0, $rc, $err . $out);
        $rest = array_values(array_filter(explode("\n", trim($out)), static fn (string $l): bool => !str_starts_with($l, 'log: ')));
        $this->assertSame(['true', 'false', 'false'], $rest);
        $this->assertStringContainsString('log: Failed to save key "{key}": Saving an item: ', $out);
        $this->assertStringContainsString('memory limit', $out);
    }

    public function testAKeyOfAnotherTypeIsAMissAndASaveReplacesIt(): void
    {
        Harness::requireHost($this, 'Only a RESP client can give a key another type than string');
        $ns = uniqid('wrongtype', false);
        $pool = new EphpmAdapter($ns, 0, null, self::PREFIX);
        $pool->setLogger($logger = self::logger());
        $this->assertSame('1', Harness::resp('HSET', self::PREFIX . $ns . ':k', 'f', 'v'));
        try {
            $this->assertFalse($pool->getItem('k')->isHit());
            $this->assertSame([], $logger->messages);
            $this->assertTrue($pool->save($pool->getItem('k')->set('v')));
            $this->assertSame('v', $pool->getItem('k')->get());
            $this->assertSame('string', Harness::resp('TYPE', self::PREFIX . $ns . ':k'));
        } finally {
            Harness::resp('DEL', self::PREFIX . $ns . ':k');
        }
    }

    public function testUnderTagAwareAdapterInvalidationReachesAnotherInstance(): void
    {
        $ns = uniqid('tags', false);
        $writer = new TagAwareAdapter(new EphpmAdapter($ns, 0, null, self::PREFIX));
        // No known-tag-versions cache in the reader: it asks the store every time.
        $reader = new TagAwareAdapter(new EphpmAdapter($ns, 0, null, self::PREFIX), null, 0);
        $this->assertTrue($writer->save($writer->getItem('k')->set('v')->tag(['t'])));
        $this->assertTrue($reader->getItem('k')->isHit());
        $this->assertTrue($writer->invalidateTags(['t']));
        $this->assertFalse($reader->getItem('k')->isHit());
        $writer->clear();
    }

    public function testConstructionWithoutTheExtensionThrows(): void
    {
        [$rc, $out, $err] = Harness::runPhp(<<<'PHP'
            try {
                new Ephpm\Symfony\Cache\EphpmAdapter();
                echo "constructed\n";
            } catch (Ephpm\ExtensionMissingException $e) {
                echo $e->getMessage(), "\n";
            }
            PHP, null);
        $this->assertSame(0, $rc, $err);
        $this->assertStringStartsWith(EphpmAdapter::class . ' needs the ephpm extension, which this PHP', $out);
    }
}
