/* This is a generated file, edit the .stub.php file instead.
 * Stub hash: efa6bbb977a762de2c36b7aa1ac95bcc3dc43b74 */

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_test_install_host_ops, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, variant, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_test_op_calls, 0, 0, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_test_session_trace, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, enable, _IS_BOOL, 0)
ZEND_END_ARG_INFO()

#define arginfo_ephpm_test_session_trace_get arginfo_ephpm_test_op_calls

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_test_delete_after, 0, 2, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, delay_ms, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_test_check_at_request_end, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
ZEND_END_ARG_INFO()


ZEND_FUNCTION(ephpm_test_install_host_ops);
ZEND_FUNCTION(ephpm_test_op_calls);
ZEND_FUNCTION(ephpm_test_session_trace);
ZEND_FUNCTION(ephpm_test_session_trace_get);
ZEND_FUNCTION(ephpm_test_delete_after);
ZEND_FUNCTION(ephpm_test_check_at_request_end);


static const zend_function_entry ext_functions[] = {
	ZEND_FE(ephpm_test_install_host_ops, arginfo_ephpm_test_install_host_ops)
	ZEND_FE(ephpm_test_op_calls, arginfo_ephpm_test_op_calls)
	ZEND_FE(ephpm_test_session_trace, arginfo_ephpm_test_session_trace)
	ZEND_FE(ephpm_test_session_trace_get, arginfo_ephpm_test_session_trace_get)
	ZEND_FE(ephpm_test_delete_after, arginfo_ephpm_test_delete_after)
	ZEND_FE(ephpm_test_check_at_request_end, arginfo_ephpm_test_check_at_request_end)
	ZEND_FE_END
};
