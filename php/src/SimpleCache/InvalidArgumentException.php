<?php

declare(strict_types=1);

namespace Ephpm\SimpleCache;

/**
 * A key, a TTL or a keys/values argument that PSR-16 does not allow.
 */
final class InvalidArgumentException extends \InvalidArgumentException implements \Psr\SimpleCache\InvalidArgumentException
{
}
