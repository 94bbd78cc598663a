/* Preloaded under ASan only.  Debian's php loads extensions with
 * dlopen(..., RTLD_DEEPBIND), which the sanitizer runtimes refuse (a deep-bound
 * library would bypass their interceptors).  This dlopen drops the flag and
 * hands over to the next one (the sanitizer's). */

#define _GNU_SOURCE
#include <dlfcn.h>

void *dlopen(const char *file, int mode) {
  static void *(*next)(const char *, int);
  if (next == 0) next = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
  return next(file, mode & ~RTLD_DEEPBIND);
}
