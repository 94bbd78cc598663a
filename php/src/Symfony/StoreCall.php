<?php

declare(strict_types=1);

namespace Ephpm\Symfony;

/**
 * Runs one ephpm_kv_* call for the Symfony adapters.
 *
 * The store reports a refusal (its memory limit, a log it cannot write, an
 * unreachable owner) as a warning next to a false result, and bad data
 * (WRONGTYPE, a value over ephpm.max_value_size) as an Error. Symfony's
 * callers catch only \Exception, and a false from the store must not read as
 * "the lock is held by another" or "a miss": both become the exception the
 * caller names, carrying the store's words.
 *
 * @internal
 */
final class StoreCall
{
    /**
     * @template T
     *
     * @param class-string<\Exception> $exception thrown with the store's message
     * @param string                   $what      what the call was for, for the message
     * @param \Closure(): T            $op        the ephpm_kv_* call
     *
     * @return T
     */
    public static function run(string $exception, string $what, \Closure $op): mixed
    {
        $warning = null;
        set_error_handler(static function (int $type, string $message) use (&$warning): bool {
            $warning ??= $message;
            return true;
        }, \E_WARNING);
        try {
            $result = $op();
        } catch (\Error $e) {
            throw new $exception(\sprintf('%s: %s', $what, $e->getMessage()), 0, $e);
        } finally {
            restore_error_handler();
        }
        if ($warning !== null) {
            throw new $exception(\sprintf('%s: %s', $what, $warning));
        }
        return $result;
    }
}
