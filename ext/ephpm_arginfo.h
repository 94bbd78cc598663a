/* This is a generated file, edit the .stub.php file instead.
 * Stub hash: 7cc80bcdd0262853cdc7da2386f6eb143664658a */

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

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_kv_set_fenced, 0, 3, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, value, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, fence, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_LONG, 0, "0")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_kv_expire_if_eq, 0, 3, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, token, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, ttl_ms, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Ephpm_Lock___construct, 0, 0, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Ephpm_Lock_acquire, 0, 1, Ephpm\\Lock, 1)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_DOUBLE, 0, "30.0")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Ephpm_Lock_block, 0, 1, Ephpm\\Lock, 1)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_DOUBLE, 0, "30.0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, wait, IS_DOUBLE, 0, "10.0")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Ephpm_Lock_restore, 0, 2, Ephpm\\Lock, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, token, IS_STRING, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Ephpm_Lock_release arginfo_ephpm_kv_flush_all

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Ephpm_Lock_refresh, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, ttl, IS_DOUBLE, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Ephpm_Lock_isAcquired arginfo_ephpm_kv_flush_all

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Ephpm_Lock_remaining, 0, 0, IS_DOUBLE, 1)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Ephpm_Lock_token, 0, 0, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Ephpm_Lock_fence, 0, 0, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Ephpm_Lock_name arginfo_class_Ephpm_Lock_token


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
ZEND_FUNCTION(ephpm_kv_set_fenced);
ZEND_FUNCTION(ephpm_kv_expire_if_eq);
ZEND_METHOD(Ephpm_Lock, __construct);
ZEND_METHOD(Ephpm_Lock, acquire);
ZEND_METHOD(Ephpm_Lock, block);
ZEND_METHOD(Ephpm_Lock, restore);
ZEND_METHOD(Ephpm_Lock, release);
ZEND_METHOD(Ephpm_Lock, refresh);
ZEND_METHOD(Ephpm_Lock, isAcquired);
ZEND_METHOD(Ephpm_Lock, remaining);
ZEND_METHOD(Ephpm_Lock, token);
ZEND_METHOD(Ephpm_Lock, fence);
ZEND_METHOD(Ephpm_Lock, name);


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
	ZEND_FE(ephpm_kv_set_fenced, arginfo_ephpm_kv_set_fenced)
	ZEND_FE(ephpm_kv_expire_if_eq, arginfo_ephpm_kv_expire_if_eq)
	ZEND_FE_END
};


static const zend_function_entry class_Ephpm_Lock_methods[] = {
	ZEND_ME(Ephpm_Lock, __construct, arginfo_class_Ephpm_Lock___construct, ZEND_ACC_PRIVATE)
	ZEND_ME(Ephpm_Lock, acquire, arginfo_class_Ephpm_Lock_acquire, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Ephpm_Lock, block, arginfo_class_Ephpm_Lock_block, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Ephpm_Lock, restore, arginfo_class_Ephpm_Lock_restore, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Ephpm_Lock, release, arginfo_class_Ephpm_Lock_release, ZEND_ACC_PUBLIC)
	ZEND_ME(Ephpm_Lock, refresh, arginfo_class_Ephpm_Lock_refresh, ZEND_ACC_PUBLIC)
	ZEND_ME(Ephpm_Lock, isAcquired, arginfo_class_Ephpm_Lock_isAcquired, ZEND_ACC_PUBLIC)
	ZEND_ME(Ephpm_Lock, remaining, arginfo_class_Ephpm_Lock_remaining, ZEND_ACC_PUBLIC)
	ZEND_ME(Ephpm_Lock, token, arginfo_class_Ephpm_Lock_token, ZEND_ACC_PUBLIC)
	ZEND_ME(Ephpm_Lock, fence, arginfo_class_Ephpm_Lock_fence, ZEND_ACC_PUBLIC)
	ZEND_ME(Ephpm_Lock, name, arginfo_class_Ephpm_Lock_name, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};

static zend_class_entry *register_class_Ephpm_Lock(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Ephpm", "Lock", class_Ephpm_Lock_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}
