dnl config.m4 for ephpm: `phpize && ./configure && make && make test` at the
dnl repository root builds ephpm.so with the C++ store compiled in.

PHP_ARG_ENABLE([ephpm],
  [whether to enable the ephpm key-value store],
  [AS_HELP_STRING([--enable-ephpm], [Enable ephpm (default: yes under phpize)])],
  [yes])

if test "$PHP_EPHPM" != "no"; then
  PHP_REQUIRE_CXX()
  PHP_CXX_COMPILE_STDCXX(17, mandatory, PHP_EPHPM_STDCXX)

  PKG_CHECK_MODULES([EPHPM_DEPS],
    [absl_flat_hash_map absl_node_hash_map absl_btree absl_synchronization libzstd libxxhash])
  PHP_EVAL_INCLINE($EPHPM_DEPS_CFLAGS)
  PHP_EVAL_LIBLINE($EPHPM_DEPS_LIBS, EPHPM_SHARED_LIBADD)
  PHP_ADD_LIBRARY(stdc++, 1, EPHPM_SHARED_LIBADD)
  PHP_SUBST(EPHPM_SHARED_LIBADD)

  dnl The sources are listed once, for CMake, and read from there: the PHP
  dnl glue from ext/sources.cmake, the store from core/CMakeLists.txt's
  dnl ephpm_core library (one indented file name per line in both).
  ephpm_srcdir=PHP_EXT_SRCDIR(ephpm)
  ephpm_glue=`sed -n '/^set.EPHPM_GLUE_SOURCES$/,/^.$/s/^  *//p' "$ephpm_srcdir/ext/sources.cmake"`
  ephpm_core=`sed -n '/^add_library.ephpm_core /,/^.$/s|^  *\(.*\.cc\)$|core/\1|p' \
    "$ephpm_srcdir/core/CMakeLists.txt"`
  if test -z "$ephpm_glue" || test -z "$ephpm_core"; then
    AC_MSG_ERROR([could not read the source lists from ext/sources.cmake and core/CMakeLists.txt])
  fi
  EPHPM_C_SOURCES=""
  EPHPM_CXX_SOURCES="$ephpm_core"
  for ephpm_file in $ephpm_glue; do
    case $ephpm_file in
      *.cc) EPHPM_CXX_SOURCES="$ephpm_file $EPHPM_CXX_SOURCES" ;;
      *) EPHPM_C_SOURCES="$EPHPM_C_SOURCES $ephpm_file" ;;
    esac
  done
  EPHPM_INCLUDES="-I@ext_srcdir@/ext -I@ext_srcdir@/session -I@ext_srcdir@/core/include -I@ext_srcdir@/core"
  EPHPM_FLAGS="-DZEND_ENABLE_STATIC_TSRMLS_CACHE=1 -fvisibility=hidden $EPHPM_INCLUDES"

  PHP_NEW_EXTENSION(ephpm, $EPHPM_C_SOURCES, $ext_shared,, $EPHPM_FLAGS, cxx)
  EPHPM_CXX_FLAGS=`echo "$EPHPM_FLAGS $PHP_EPHPM_STDCXX" | $SED s#@ext_srcdir@#$ext_srcdir#g`
  if test "$ext_shared" = "no"; then
    PHP_ADD_SOURCES(PHP_EXT_DIR(ephpm), $EPHPM_CXX_SOURCES, $EPHPM_CXX_FLAGS)
  else
    PHP_ADD_SOURCES_X(PHP_EXT_DIR(ephpm), $EPHPM_CXX_SOURCES, $EPHPM_CXX_FLAGS -DZEND_COMPILE_DL_EXT=1,
                      shared_objects_ephpm, yes)
  fi
  PHP_ADD_BUILD_DIR($ext_builddir/ext)
  PHP_ADD_BUILD_DIR($ext_builddir/core)
  PHP_ADD_BUILD_DIR($ext_builddir/session)
  PHP_ADD_EXTENSION_DEP(ephpm, session)

  dnl `make test` runs php-tests/ (run-tests.php scans only tests/ by default).
  PHP_ADD_MAKEFILE_FRAGMENT
fi
