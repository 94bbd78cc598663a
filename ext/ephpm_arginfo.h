/* This is a generated file, edit the .stub.php file instead.
 * Stub hash: 4ec54d95742502768c833cfa3c0029083c511768 */

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_kv_get, 0, 1, IS_STRING, 1)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_kv_set, 0, 2, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, value, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_LONG, 0, "0")
ZEND_END_ARG_INFO()

#define arginfo_ephpm_kv_setnx arginfo_ephpm_kv_set

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_ephpm_kv_del, 0, 1, MAY_BE_LONG|MAY_BE_FALSE)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_kv_del_if_eq, 0, 2, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, token, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_kv_exists, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
ZEND_END_ARG_INFO()

#define arginfo_ephpm_kv_incr arginfo_ephpm_kv_del

#define arginfo_ephpm_kv_decr arginfo_ephpm_kv_del

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_ephpm_kv_incr_by, 0, 2, MAY_BE_LONG|MAY_BE_FALSE)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, delta, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_kv_expire, 0, 2, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, ttl, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_ephpm_kv_pexpire arginfo_ephpm_kv_expire

#define arginfo_ephpm_kv_persist arginfo_ephpm_kv_exists

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_kv_ttl, 0, 1, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
ZEND_END_ARG_INFO()

#define arginfo_ephpm_kv_pttl arginfo_ephpm_kv_ttl

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_kv_mget, 0, 1, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, keys, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_kv_keys, 0, 0, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, pattern, IS_STRING, 0, "\"*\"")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_kv_flush_all, 0, 0, _IS_BOOL, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_ephpm_kv_wait, 0, 3, MAY_BE_ARRAY|MAY_BE_FALSE)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, last_version, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, timeout_ms, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_kv_info, 0, 0, IS_ARRAY, 0)
ZEND_END_ARG_INFO()


ZEND_FUNCTION(ephpm_kv_get);
ZEND_FUNCTION(ephpm_kv_set);
ZEND_FUNCTION(ephpm_kv_setnx);
ZEND_FUNCTION(ephpm_kv_del);
ZEND_FUNCTION(ephpm_kv_del_if_eq);
ZEND_FUNCTION(ephpm_kv_exists);
ZEND_FUNCTION(ephpm_kv_incr);
ZEND_FUNCTION(ephpm_kv_decr);
ZEND_FUNCTION(ephpm_kv_incr_by);
ZEND_FUNCTION(ephpm_kv_expire);
ZEND_FUNCTION(ephpm_kv_pexpire);
ZEND_FUNCTION(ephpm_kv_persist);
ZEND_FUNCTION(ephpm_kv_ttl);
ZEND_FUNCTION(ephpm_kv_pttl);
ZEND_FUNCTION(ephpm_kv_mget);
ZEND_FUNCTION(ephpm_kv_keys);
ZEND_FUNCTION(ephpm_kv_flush_all);
ZEND_FUNCTION(ephpm_kv_wait);
ZEND_FUNCTION(ephpm_kv_info);


static const zend_function_entry ext_functions[] = {
	ZEND_FE(ephpm_kv_get, arginfo_ephpm_kv_get)
	ZEND_FE(ephpm_kv_set, arginfo_ephpm_kv_set)
	ZEND_FE(ephpm_kv_setnx, arginfo_ephpm_kv_setnx)
	ZEND_FE(ephpm_kv_del, arginfo_ephpm_kv_del)
	ZEND_FE(ephpm_kv_del_if_eq, arginfo_ephpm_kv_del_if_eq)
	ZEND_FE(ephpm_kv_exists, arginfo_ephpm_kv_exists)
	ZEND_FE(ephpm_kv_incr, arginfo_ephpm_kv_incr)
	ZEND_FE(ephpm_kv_decr, arginfo_ephpm_kv_decr)
	ZEND_FE(ephpm_kv_incr_by, arginfo_ephpm_kv_incr_by)
	ZEND_FE(ephpm_kv_expire, arginfo_ephpm_kv_expire)
	ZEND_FE(ephpm_kv_pexpire, arginfo_ephpm_kv_pexpire)
	ZEND_FE(ephpm_kv_persist, arginfo_ephpm_kv_persist)
	ZEND_FE(ephpm_kv_ttl, arginfo_ephpm_kv_ttl)
	ZEND_FE(ephpm_kv_pttl, arginfo_ephpm_kv_pttl)
	ZEND_FE(ephpm_kv_mget, arginfo_ephpm_kv_mget)
	ZEND_FE(ephpm_kv_keys, arginfo_ephpm_kv_keys)
	ZEND_FE(ephpm_kv_flush_all, arginfo_ephpm_kv_flush_all)
	ZEND_FE(ephpm_kv_wait, arginfo_ephpm_kv_wait)
	ZEND_FE(ephpm_kv_info, arginfo_ephpm_kv_info)
	ZEND_FE_END
};
