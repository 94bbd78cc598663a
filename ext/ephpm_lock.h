/* Ephpm\Lock (ephpm_lock.c): the class's handlers and the release of the
 * request's held locks. */

#ifndef EPHPM_LOCK_H
#define EPHPM_LOCK_H

#include "php.h"

/* Sets up the class registered from the stub (MINIT). */
void ephpm_lock_init_class(zend_class_entry *ce);

/* Releases, by token, every Lock of this request that may still hold its
 * grant (RSHUTDOWN: after exit() and fatal errors too). */
void ephpm_lock_request_shutdown(void);

#endif /* EPHPM_LOCK_H */
