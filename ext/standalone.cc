// The standalone store: made lazily by the first call in a process, never
// at module startup, because php-fpm's master forks its children after
// MINIT and a store made there would be copied into every child without its
// sweeper thread.  (With ephpm.persistence=log, ephpm.c makes it at startup
// instead, in single-process SAPIs only, so that a data dir that cannot be
// used stops PHP before it runs any script.)

#include <pthread.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>

#include "ephpm/kv_ops_store.h"
#include "ephpm/persistence.h"
#include "ephpm/settings.h"
#include "ephpm_bridge.h"

namespace {

struct Standalone {
  std::unique_ptr<ephpm::Store> store;
  ephpm_kv_ops ops;
};

std::mutex g_mu;                              // serialises creation
std::atomic<Standalone*> g_current{nullptr};  // this process's store
std::once_flag g_atfork_once;

// In a forked child the parent's store is a copy whose sweeper thread does
// not exist and whose locks may be frozen mid-operation; it is abandoned
// (never destroyed: that would join a thread the child does not have) and
// the child makes its own on first use.
void AfterForkInChild() {
  g_current.store(nullptr, std::memory_order_relaxed);
  new (&g_mu) std::mutex();  // a lock held by another parent thread stays held
}

void SetError(char* err, size_t err_len, const std::string& msg) {
  if (err_len > 0) std::snprintf(err, err_len, "%s", msg.c_str());
}

// The extension's own settings (core's ApplySetting does not know them):
// persistence (off | log; php.ini's bare Off arrives as ""), data_dir (any
// path; checked when the store is made) and fsync.  Then core's.  *log is
// set for persistence=log; the data dir reaches *o only with it.
std::string ApplyAny(std::string_view name, const char* value, ephpm::StoreOptions* o, bool* log) {
  const std::string_view v = value;
  if (name == "persistence") {
    if (v.empty() || ephpm::EqualsIgnoreCase(v, "off")) {
      *log = false;
    } else if (ephpm::EqualsIgnoreCase(v, "log")) {
      *log = true;
    } else {
      return "must be off or log";
    }
    return "";
  }
  if (name == "data_dir") {
    o->persistence.data_dir = value;
    return "";
  }
  if (name == "fsync") {
    std::string lower(v);
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return ephpm::ParseFsyncPolicy(lower, &o->persistence.fsync) ? ""
                                                                 : "must be always, everysec or no";
  }
  return ephpm::ApplySetting(name, v, o);
}

}  // namespace

extern "C" {

const char* const ephpm_store_setting_names[EPHPM_STORE_SETTING_COUNT] = {
    "memory_limit",      "eviction_policy", "compression", "compression_threshold",
    "compression_level", "max_value_size",  "shards",      "persistence",
    "data_dir",          "fsync",
};

int ephpm_store_setting_check(const char* name, const char* value, char* err, size_t err_len) {
  try {
    ephpm::StoreOptions o;
    bool log = false;
    const std::string msg = ApplyAny(name, value, &o, &log);
    if (msg.empty()) return 1;
    SetError(err, err_len, msg);
  } catch (const std::bad_alloc&) {
    SetError(err, err_len, "out of memory");
  }
  return 0;
}

const ephpm_kv_ops* ephpm_standalone_ops(const char* const values[EPHPM_STORE_SETTING_COUNT],
                                         char* err, size_t err_len) {
  if (Standalone* s = g_current.load(std::memory_order_acquire)) return &s->ops;
  try {
    std::call_once(g_atfork_once, [] { pthread_atfork(nullptr, nullptr, AfterForkInChild); });
    std::lock_guard<std::mutex> l(g_mu);
    if (Standalone* s = g_current.load(std::memory_order_acquire)) return &s->ops;
    ephpm::StoreOptions o;
    bool log = false;
    for (int i = 0; i < EPHPM_STORE_SETTING_COUNT; ++i) {
      const std::string msg = ApplyAny(ephpm_store_setting_names[i], values[i], &o, &log);
      if (!msg.empty()) {
        SetError(err, err_len,
                 std::string("ephpm.") + ephpm_store_setting_names[i] + " " + msg);
        return nullptr;
      }
    }
    if (!log) {
      o.persistence.data_dir.clear();
    } else if (o.persistence.data_dir.empty()) {
      SetError(err, err_len, "ephpm.persistence=log needs ephpm.data_dir");
      return nullptr;
    }
    std::string error;
    auto made = std::make_unique<Standalone>();
    made->store = ephpm::Store::Create(o, &error);
    if (!made->store) {
      SetError(err, err_len, error);
      return nullptr;
    }
    made->ops = ephpm::MakeKvOps(made->store.get());
    Standalone* s = made.release();
    g_current.store(s, std::memory_order_release);
    return &s->ops;
  } catch (const std::exception& e) {  // bad_alloc, or a thread that could not start
    SetError(err, err_len, e.what());
    return nullptr;
  }
}

int ephpm_store_settings_persistent(const char* const values[EPHPM_STORE_SETTING_COUNT]) {
  for (int i = 0; i < EPHPM_STORE_SETTING_COUNT; ++i) {
    if (std::strcmp(ephpm_store_setting_names[i], "persistence") == 0) {
      return ephpm::EqualsIgnoreCase(values[i], "log") ? 1 : 0;
    }
  }
  return 0;
}

const ephpm_kv_ops* ephpm_standalone_ops_if_created(void) {
  Standalone* s = g_current.load(std::memory_order_acquire);
  return s != nullptr ? &s->ops : nullptr;
}

void ephpm_standalone_shutdown(void) {
  std::lock_guard<std::mutex> l(g_mu);
  delete g_current.exchange(nullptr, std::memory_order_acq_rel);
}

}  // extern "C"
