/* This is a generated file, edit the .stub.php file instead.
 * Stub hash: e4dff2ea842217ffbde8dda961daa737505f6dcf */

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ephpm_test_install_host_ops, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, variant, IS_STRING, 0)
ZEND_END_ARG_INFO()


ZEND_FUNCTION(ephpm_test_install_host_ops);


static const zend_function_entry ext_functions[] = {
	ZEND_FE(ephpm_test_install_host_ops, arginfo_ephpm_test_install_host_ops)
	ZEND_FE_END
};
