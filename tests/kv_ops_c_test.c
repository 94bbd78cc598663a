/* Plain C against kv_ops.h: proves the header is C and calls every op,
 * checking each result and status.  The table comes from a small C++ shim
 * (kv_ops_c_fixture.cc) because building a Store is C++. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ephpm/kv_ops.h"

/* From kv_ops_c_fixture.cc. */
const ephpm_kv_ops *fixture_ops(void);

static int failures = 0;

#define EXPECT(cond)                                                  \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                     \
    }                                                                 \
  } while (0)

static int bytes_eq(const char *p, size_t n, const char *want, size_t want_n) {
  return n == want_n && (n == 0 || memcmp(p, want, n) == 0);
}

int main(void) {
  const ephpm_kv_ops *ops = fixture_ops();
  void *ctx = ops->ctx;
  char *value = NULL;
  size_t value_len = 0;
  int flag = -1, changed = -1, found = -1;
  int64_t n = -1, n64 = 0;
  uint64_t version = 0, count = 0;
  static const char bin_key[] = {'b', 0, 'k'};
  static const char bin_val[] = {0, 'v', 0};
  char long_key[64 * 1024 + 1];
  memset(long_key, 'x', sizeof long_key);

  EXPECT(ops->abi_version == EPHPM_KV_ABI_VERSION);
  EXPECT(ops->size == sizeof(ephpm_kv_ops));
  EXPECT(EPHPM_KV_OPS_HAS(ops, del_if_eq));
  EXPECT(EPHPM_KV_OPS_HAS(ops, dbsize));
  EXPECT(EPHPM_KV_OPS_HAS(ops, del_if_guard_eq));
  EXPECT(EPHPM_KV_OPS_HAS(ops, expire_if_guard_eq));

  /* set / get, binary-safe, and "" that is not NULL */
  EXPECT(ops->set(ctx, "k", 1, "hello", 5, 0) == EPHPM_KV_OK);
  EXPECT(ops->get(ctx, "k", 1, &value, &value_len) == EPHPM_KV_OK);
  EXPECT(bytes_eq(value, value_len, "hello", 5));
  free(value);
  EXPECT(ops->set(ctx, bin_key, sizeof bin_key, bin_val, sizeof bin_val, 0) == EPHPM_KV_OK);
  EXPECT(ops->get(ctx, bin_key, sizeof bin_key, &value, &value_len) == EPHPM_KV_OK);
  EXPECT(bytes_eq(value, value_len, bin_val, sizeof bin_val));
  free(value);
  EXPECT(ops->set(ctx, "empty", 5, NULL, 0, 0) == EPHPM_KV_OK);
  value = NULL;
  EXPECT(ops->get(ctx, "empty", 5, &value, &value_len) == EPHPM_KV_OK);
  EXPECT(value != NULL && value_len == 0);
  free(value);
  EXPECT(ops->get(ctx, "missing", 7, &value, &value_len) == EPHPM_KV_NOT_FOUND);

  /* invalid arguments */
  EXPECT(ops->set(ctx, long_key, sizeof long_key, "v", 1, 0) == EPHPM_KV_INVALID_ARGUMENT);
  EXPECT(ops->set(ctx, "k", 1, "v", 1, -1) == EPHPM_KV_INVALID_ARGUMENT);
  EXPECT(ops->get(ctx, long_key, sizeof long_key, &value, &value_len) ==
         EPHPM_KV_INVALID_ARGUMENT);

  /* set_nx */
  EXPECT(ops->set_nx(ctx, "lock", 4, "tokA", 4, 30000, &flag) == EPHPM_KV_OK && flag == 1);
  EXPECT(ops->set_nx(ctx, "lock", 4, "tokB", 4, 30000, &flag) == EPHPM_KV_OK && flag == 0);
  EXPECT(ops->set_nx(ctx, "lock", 4, "tokB", 4, -5, &flag) == EPHPM_KV_INVALID_ARGUMENT);

  /* del_if_eq */
  EXPECT(ops->del_if_eq(ctx, "lock", 4, "tokB", 4, &flag) == EPHPM_KV_OK && flag == 0);
  EXPECT(ops->del_if_eq(ctx, "lock", 4, "tokA", 4, &flag) == EPHPM_KV_OK && flag == 1);
  EXPECT(ops->del_if_eq(ctx, "lock", 4, "tokA", 4, &flag) == EPHPM_KV_OK && flag == 0);

  /* del / exists */
  EXPECT(ops->exists(ctx, "k", 1, &flag) == EPHPM_KV_OK && flag == 1);
  EXPECT(ops->del(ctx, "k", 1, &n) == EPHPM_KV_OK && n == 1);
  EXPECT(ops->del(ctx, "k", 1, &n) == EPHPM_KV_OK && n == 0);
  EXPECT(ops->exists(ctx, "k", 1, &flag) == EPHPM_KV_OK && flag == 0);

  /* incr_by */
  EXPECT(ops->incr_by(ctx, "n", 1, 41, &n) == EPHPM_KV_OK && n == 41);
  EXPECT(ops->incr_by(ctx, "n", 1, 1, &n) == EPHPM_KV_OK && n == 42);
  EXPECT(ops->set(ctx, "s", 1, "abc", 3, 0) == EPHPM_KV_OK);
  EXPECT(ops->incr_by(ctx, "s", 1, 1, &n) == EPHPM_KV_NOT_INTEGER);
  EXPECT(ops->set(ctx, "max", 3, "9223372036854775807", 19, 0) == EPHPM_KV_OK);
  EXPECT(ops->incr_by(ctx, "max", 3, 1, &n) == EPHPM_KV_OVERFLOW);

  /* expire / pttl / persist */
  EXPECT(ops->pttl(ctx, "n", 1, &n) == EPHPM_KV_OK && n == -1);
  EXPECT(ops->pttl(ctx, "nope", 4, &n) == EPHPM_KV_OK && n == -2);
  EXPECT(ops->expire(ctx, "n", 1, 60000, &flag) == EPHPM_KV_OK && flag == 1);
  EXPECT(ops->pttl(ctx, "n", 1, &n) == EPHPM_KV_OK && n > 59000 && n <= 60000);
  EXPECT(ops->persist(ctx, "n", 1, &flag) == EPHPM_KV_OK && flag == 1);
  EXPECT(ops->pttl(ctx, "n", 1, &n) == EPHPM_KV_OK && n == -1);
  EXPECT(ops->persist(ctx, "n", 1, &flag) == EPHPM_KV_OK && flag == 0);
  EXPECT(ops->expire(ctx, "n", 1, 0, &flag) == EPHPM_KV_OK && flag == 1);
  EXPECT(ops->exists(ctx, "n", 1, &flag) == EPHPM_KV_OK && flag == 0);
  EXPECT(ops->expire(ctx, "n", 1, 1000, &flag) == EPHPM_KV_OK && flag == 0);

  /* wait: a present key with last_version 0 returns at once */
  EXPECT(ops->set(ctx, "w", 1, "x", 1, 0) == EPHPM_KV_OK);
  EXPECT(ops->wait(ctx, "w", 1, 0, 1000, &changed, &found, &value, &value_len, &version) ==
         EPHPM_KV_OK);
  EXPECT(changed == 1 && found == 1 && version != 0 && bytes_eq(value, value_len, "x", 1));
  free(value);
  EXPECT(ops->wait(ctx, "w", 1, version, 10, &changed, &found, &value, &value_len, &version) ==
         EPHPM_KV_OK);
  EXPECT(changed == 0 && value == NULL);
  EXPECT(ops->wait(ctx, "w", 1, 0, -1, &changed, &found, &value, &value_len, &version) ==
         EPHPM_KV_INVALID_ARGUMENT);

  /* keys / dbsize */
  {
    ephpm_kv_list *list = NULL;
    size_t i;
    int saw_bin = 0;
    EXPECT(ops->keys(ctx, "b*", 2, &list) == EPHPM_KV_OK);
    EXPECT(list != NULL && list->count == 1);
    for (i = 0; list != NULL && i < list->count; i++) {
      if (bytes_eq(list->items[i].data, list->items[i].len, bin_key, sizeof bin_key)) saw_bin = 1;
    }
    EXPECT(saw_bin);
    free(list);
  }
  EXPECT(ops->dbsize(ctx, &count) == EPHPM_KV_OK && count == 5); /* bin, empty, s, max, w */

  /* mget: in key order, NULL data for a missing key, non-NULL for "" */
  {
    ephpm_kv_bytes keys[4];
    ephpm_kv_list *values = NULL;
    keys[0].data = "w"; keys[0].len = 1;
    keys[1].data = "nope"; keys[1].len = 4;
    keys[2].data = "empty"; keys[2].len = 5;
    keys[3].data = bin_key; keys[3].len = sizeof bin_key;
    EXPECT(ops->mget(ctx, keys, 4, &values) == EPHPM_KV_OK);
    EXPECT(values != NULL && values->count == 4);
    if (values != NULL && values->count == 4) {
      EXPECT(bytes_eq(values->items[0].data, values->items[0].len, "x", 1));
      EXPECT(values->items[1].data == NULL);
      EXPECT(values->items[2].data != NULL && values->items[2].len == 0);
      EXPECT(bytes_eq(values->items[3].data, values->items[3].len, bin_val, sizeof bin_val));
    }
    free(values);
    keys[1].data = long_key; keys[1].len = sizeof long_key;
    EXPECT(ops->mget(ctx, keys, 2, &values) == EPHPM_KV_INVALID_ARGUMENT);
  }

  /* info */
  {
    ephpm_kv_info info;
    memset(&info, 0xff, sizeof info);
    info.size = sizeof info;
    EXPECT(ops->info(ctx, &info) == EPHPM_KV_OK);
    EXPECT(info.size == sizeof info);
    EXPECT(info.keys == 5 && info.memory_used > 0 && info.memory_limit == 0);
    EXPECT(info.max_value_size == 512u * 1024 * 1024);
    EXPECT(info.hits > 0 && info.misses > 0 && info.evicted == 0);
    /* an older caller's smaller struct is filled only as far as it goes */
    memset(&info, 0xab, sizeof info);
    info.size = (uint32_t)offsetof(ephpm_kv_info, memory_used);
    EXPECT(ops->info(ctx, &info) == EPHPM_KV_OK);
    EXPECT(info.keys == 5);
    EXPECT(info.memory_used == 0xababababababababull);
    /* a lock (set_nx with a TTL) is counted as pinned; a caller compiled
     * before the pinned fields gets everything up to them */
    EXPECT(ops->set_nx(ctx, "lk", 2, "tok", 3, 60000, &flag) == EPHPM_KV_OK && flag == 1);
    memset(&info, 0xff, sizeof info);
    info.size = sizeof info;
    EXPECT(ops->info(ctx, &info) == EPHPM_KV_OK);
    EXPECT(info.pinned_keys == 1 && info.pinned_bytes > 0 &&
           info.pinned_bytes < info.memory_used);
    memset(&info, 0xab, sizeof info);
    info.size = (uint32_t)offsetof(ephpm_kv_info, pinned_keys);
    EXPECT(ops->info(ctx, &info) == EPHPM_KV_OK);
    EXPECT(info.keys == 6 && info.compressed_stored_bytes == 0);
    EXPECT(info.pinned_keys == 0xababababababababull);
    EXPECT(ops->del_if_eq(ctx, "lk", 2, "tok", 3, &flag) == EPHPM_KV_OK && flag == 1);
  }

  /* set_if_eq: the fenced write */
  EXPECT(ops->set_nx(ctx, "g", 1, "tok", 3, 0, &flag) == EPHPM_KV_OK && flag == 1);
  EXPECT(ops->set_if_eq(ctx, "g", 1, "tok", 3, "d", 1, "data", 4, 0, &flag) == EPHPM_KV_OK &&
         flag == 1);
  EXPECT(ops->set_if_eq(ctx, "g", 1, "bad", 3, "d", 1, "xxxx", 4, 0, &flag) == EPHPM_KV_OK &&
         flag == 0);
  EXPECT(ops->get(ctx, "d", 1, &value, &value_len) == EPHPM_KV_OK);
  EXPECT(bytes_eq(value, value_len, "data", 4));
  free(value);
  EXPECT(ops->set_if_eq(ctx, "g", 1, "tok", 3, "d", 1, "x", 1, -1, &flag) ==
         EPHPM_KV_INVALID_ARGUMENT);
  EXPECT(ops->del(ctx, "g", 1, &n) == EPHPM_KV_OK && ops->del(ctx, "d", 1, &n) == EPHPM_KV_OK);

  /* del_if_guard_eq: the fenced delete */
  {
    int matched = -1, removed = -1;
    EXPECT(ops->set_nx(ctx, "g", 1, "tok", 3, 0, &flag) == EPHPM_KV_OK && flag == 1);
    EXPECT(ops->set(ctx, "d", 1, "data", 4, 0) == EPHPM_KV_OK);
    EXPECT(ops->del_if_guard_eq(ctx, "g", 1, "bad", 3, "d", 1, &matched, &removed) ==
               EPHPM_KV_OK &&
           matched == 0 && removed == 0);
    EXPECT(ops->exists(ctx, "d", 1, &flag) == EPHPM_KV_OK && flag == 1);
    EXPECT(ops->del_if_guard_eq(ctx, "g", 1, "tok", 3, "d", 1, &matched, &removed) ==
               EPHPM_KV_OK &&
           matched == 1 && removed == 1);
    EXPECT(ops->exists(ctx, "d", 1, &flag) == EPHPM_KV_OK && flag == 0);
    EXPECT(ops->del_if_guard_eq(ctx, "g", 1, "tok", 3, "d", 1, &matched, &removed) ==
               EPHPM_KV_OK &&
           matched == 1 && removed == 0);
    /* expire_if_guard_eq: the fenced TTL refresh */
    int applied = -1;
    int64_t ttl = 0;
    EXPECT(ops->set(ctx, "d", 1, "data", 4, 0) == EPHPM_KV_OK);
    EXPECT(ops->expire_if_guard_eq(ctx, "g", 1, "bad", 3, "d", 1, 5000, &matched, &applied) ==
               EPHPM_KV_OK &&
           matched == 0 && applied == 0);
    EXPECT(ops->pttl(ctx, "d", 1, &ttl) == EPHPM_KV_OK && ttl == -1);
    EXPECT(ops->expire_if_guard_eq(ctx, "g", 1, "tok", 3, "d", 1, 5000, &matched, &applied) ==
               EPHPM_KV_OK &&
           matched == 1 && applied == 1);
    EXPECT(ops->pttl(ctx, "d", 1, &ttl) == EPHPM_KV_OK && ttl > 0 && ttl <= 5000);
    EXPECT(ops->expire_if_guard_eq(ctx, "g", 1, "tok", 3, "zz", 2, 5000, &matched, &applied) ==
               EPHPM_KV_OK &&
           matched == 1 && applied == 0);
    EXPECT(ops->expire_if_guard_eq(ctx, "g", 1, "tok", 3, "d", 1, -1, &matched, &applied) ==
           EPHPM_KV_INVALID_ARGUMENT);
    EXPECT(ops->del(ctx, "d", 1, &n) == EPHPM_KV_OK);
    EXPECT(ops->del(ctx, "g", 1, &n) == EPHPM_KV_OK);
  }

  /* get_into: the caller's buffer, or the length to size one */
  {
    char buf[4];
    size_t n = 0;
    EXPECT(ops->set(ctx, "gi", 2, "abc", 3, 0) == EPHPM_KV_OK);
    EXPECT(ops->get_into(ctx, "gi", 2, buf, sizeof buf, &n) == EPHPM_KV_OK && n == 3);
    EXPECT(bytes_eq(buf, n, "abc", 3));
    EXPECT(ops->set(ctx, "gi", 2, "abcdefgh", 8, 0) == EPHPM_KV_OK);
    memset(buf, 'x', sizeof buf);
    EXPECT(ops->get_into(ctx, "gi", 2, buf, sizeof buf, &n) == EPHPM_KV_OK && n == 8);
    EXPECT(bytes_eq(buf, 4, "xxxx", 4)); /* too small: untouched */
    EXPECT(ops->get_into(ctx, "nope", 4, buf, sizeof buf, &n) == EPHPM_KV_NOT_FOUND);
    EXPECT(ops->del(ctx, "gi", 2, &n64) == EPHPM_KV_OK);
  }

  /* flush_all */
  EXPECT(ops->flush_all(ctx) == EPHPM_KV_OK);
  EXPECT(ops->dbsize(ctx, &count) == EPHPM_KV_OK && count == 0);

  EXPECT(strcmp(ephpm_kv_status_name(EPHPM_KV_OUT_OF_MEMORY), "out of memory") == 0);
  EXPECT(strcmp(ephpm_kv_status_name(99), "unknown status") == 0);

  if (failures != 0) {
    fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  printf("kv_ops C test: all ops checked\n");
  return 0;
}
