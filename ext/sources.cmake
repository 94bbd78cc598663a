# The PHP glue: the extension and the session handler, compiled into ephpm.so
# (ext/CMakeLists.txt) and into the ephpm program (sapi/CMakeLists.txt).
# config.m4 (phpize) reads this same list with sed at configure time: keep
# one path per line, relative to the repository root, between the set( line
# and the closing parenthesis.
set(EPHPM_GLUE_SOURCES
  ext/ephpm.c
  ext/ephpm_functions.c
  ext/ephpm_lock.c
  ext/ephpm_ops.c
  ext/standalone.cc
  session/ephpm_session.c
)
list(TRANSFORM EPHPM_GLUE_SOURCES PREPEND ${PROJECT_SOURCE_DIR}/)
