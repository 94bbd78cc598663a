<?php

declare(strict_types=1);

namespace Ephpm\SimpleCache;

/**
 * The store failed a read or a delete in a way that has no PSR-16 return
 * value (an Error from the extension, e.g. a key that holds a non-string
 * value written over RESP); the store's message is kept, the Error is the
 * previous exception.
 */
final class CacheException extends \RuntimeException implements \Psr\SimpleCache\CacheException
{
}
