# Included by the phpize-generated Makefile: `make test` runs php-tests/.
TESTS = php-tests
