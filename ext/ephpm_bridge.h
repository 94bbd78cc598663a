/* The extension's only door to C++ (ext/standalone.cc): building a store of
 * its own when no host installed an ops table, and checking settings with the
 * same code the host uses.  Plain C; no C++ type crosses it. */

#ifndef EPHPM_BRIDGE_H
#define EPHPM_BRIDGE_H

#include <stddef.h>

#include "ephpm/kv_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ephpm.* store settings, in the order ephpm_store_setting_names lists:
 * core's (ephpm/settings.h), then persistence, data_dir and fsync. */
#define EPHPM_STORE_SETTING_COUNT 10
extern const char *const ephpm_store_setting_names[EPHPM_STORE_SETTING_COUNT];

/* 1 when `value` is valid for store setting `name` (without "ephpm."), else 0
 * with a message in err. */
int ephpm_store_setting_check(const char *name, const char *value, char *err, size_t err_len);

/* The table of this process's standalone store, creating the store on first
 * call from `values` (one per setting name).  After fork() the child builds
 * a store of its own on its first call.  NULL with a message in err when the
 * store cannot be created.  Thread-safe. */
const ephpm_kv_ops *ephpm_standalone_ops(const char *const values[EPHPM_STORE_SETTING_COUNT],
                                         char *err, size_t err_len);

/* 1 when `values` turn persistence on (ephpm.persistence=log), else 0. */
int ephpm_store_settings_persistent(const char *const values[EPHPM_STORE_SETTING_COUNT]);

/* The standalone table if this process already created its store, else NULL. */
const ephpm_kv_ops *ephpm_standalone_ops_if_created(void);

/* Destroys this process's standalone store, if it made one. */
void ephpm_standalone_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* EPHPM_BRIDGE_H */
