/* Which ops table this process uses: the one a host installed, or the
 * extension's own standalone store. */

#ifndef EPHPM_OPS_H
#define EPHPM_OPS_H

#include <stdbool.h>

#include "ephpm/kv_ops.h"
#include "php_ephpm.h"

/* Installs the host's table.  A host calls this once, before PHP starts (before
 * php_module_startup / php_embed_init); the table is copied.  A table of
 * another ABI version, or shorter than the original table, is refused: every
 * ephpm_kv_* call then throws an Error saying why (never a silent fallback to a
 * second store).  NULL uninstalls. */
EPHPM_API void ephpm_set_kv_ops(const ephpm_kv_ops *ops);

/* The table for this call; NULL with an Error thrown when there is none (a
 * refused host table, or a standalone store that could not be made). */
const ephpm_kv_ops *ephpm_ops_get(void);

/* The table in use if there is one, else NULL: never throws and never makes
 * a store (for releasing what a request holds while it ends). */
const ephpm_kv_ops *ephpm_ops_peek(void);

/* true when `slot` is in `ops`; else throws an Error naming the missing op. */
#define EPHPM_OPS_REQUIRE(ops, slot) \
  (EPHPM_KV_OPS_HAS(ops, slot) || (ephpm_ops_missing(ops, #slot), false))
void ephpm_ops_missing(const ephpm_kv_ops *ops, const char *slot);

/* "host" or "standalone". */
const char *ephpm_ops_mode(void);

/* For phpinfo(): the ABI version and size of the table in use, or false when
 * no table exists yet (standalone, before the first call). */
bool ephpm_ops_describe(uint32_t *abi_version, uint32_t *size);

/* A refusal message from ephpm_set_kv_ops, or "" . */
const char *ephpm_ops_host_error(void);

#endif /* EPHPM_OPS_H */
