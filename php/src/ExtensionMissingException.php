<?php

declare(strict_types=1);

namespace Ephpm;

/**
 * Thrown when an adapter is constructed in a PHP that has not loaded the
 * ephpm extension (plain php-fpm or the CLI without extension=ephpm).  The
 * adapters never fall back to another store: a cache or a lock that
 * silently lives somewhere else is worse than one that refuses to start.
 */
final class ExtensionMissingException extends \RuntimeException
{
    /**
     * Throws unless the extension's functions are there.
     *
     * @param string $adapter the class being constructed, for the message
     */
    public static function assertLoaded(string $adapter): void
    {
        if (\extension_loaded('ephpm') && \function_exists('ephpm_kv_del_if_eq')) {
            return;
        }
        throw new self(\sprintf(
            '%s needs the ephpm extension, which this PHP (%s, SAPI "%s") has not loaded: '
            . 'run the application in the ephpm host, or add extension=ephpm to its php.ini',
            $adapter,
            \PHP_VERSION,
            \PHP_SAPI
        ));
    }
}
