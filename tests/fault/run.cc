// The fault run's settings, start time and timeline (run.h).

#include "run.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iterator>
#include <random>
#include <sstream>
#include <thread>

#include "workload.h"

namespace ephpm_fault {

// ---- time and printing ------------------------------------------------------------

int64_t g_t0_us = 0;

std::string At(int64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(us - g_t0_us) / 1e6);
  return buf;
}

void MarkLog(const std::string& log_path, const char* what) {
  char line[192];
  const time_t now = time(nullptr);
  struct tm tm;
  gmtime_r(&now, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::snprintf(line, sizeof line, "=== fault driver: %s at %s (driver time %s)\n", what, when,
                At(NowUs()).c_str());
  if (std::FILE* f = std::fopen(log_path.c_str(), "a")) {
    std::fputs(line, f);
    std::fclose(f);
  }
}

std::string Ms(int64_t us) { return std::to_string((us + 500) / 1000) + " ms"; }

void Event(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::printf("[%9.3f s] %s\n", static_cast<double>(NowUs() - g_t0_us) / 1e6, buf);
  std::fflush(stdout);
}

void SleepMs(int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// ---- configuration ----------------------------------------------------------------

namespace {

const char* const kAllKinds[] = {"pause-short", "pause-long",  "kill",      "kill-lagging",
                                 "delay-short", "delay-long",  "delayrepl"};
// Faults of the etcd cluster (strict mode): "etcd" in EPHPM_FAULT_KINDS.
const char* const kEtcdKinds[] = {"etcd-kill-restart", "etcd-kill-leader"};

bool EnvInt(const char* name, int64_t lo, int64_t hi, int64_t* v, std::string* error) {
  const char* s = std::getenv(name);
  if (s == nullptr || *s == '\0') return true;
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0' || n < lo || n > hi) {
    *error = std::string(name) + "=" + s + ": needs an integer from " + std::to_string(lo) +
             " to " + std::to_string(hi);
    return false;
  }
  *v = n;
  return true;
}

}  // namespace

bool LoadConfig(Config* c, std::string* error) {
  if (const char* s = std::getenv("EPHPM_FAULT_SEED"); s != nullptr && *s != '\0') {
    char* end = nullptr;
    errno = 0;
    c->seed = std::strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0') {
      *error = std::string("EPHPM_FAULT_SEED=") + s + ": needs an unsigned integer";
      return false;
    }
  } else {
    c->seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  }
  int64_t lock_threads = c->lock_threads, incr_threads = c->incr_threads;
  int64_t lock_keys = c->lock_keys_per_node, counters = c->counters_per_node;
  if (!EnvInt("EPHPM_FAULT_SECONDS", 1, 86400 * 7, &c->main_seconds, error) ||
      !EnvInt("EPHPM_FAULT_TAIL_SECONDS", 0, 3600, &c->tail_seconds, error) ||
      !EnvInt("EPHPM_FAULT_PARTITION_SECONDS", 1, 3600, &c->partition_seconds, error) ||
      !EnvInt("EPHPM_FAULT_LOCK_THREADS", 1, 256, &lock_threads, error) ||
      !EnvInt("EPHPM_FAULT_INCR_THREADS", 1, 256, &incr_threads, error) ||
      !EnvInt("EPHPM_FAULT_LOCK_KEYS_PER_NODE", 1, 100, &lock_keys, error) ||
      !EnvInt("EPHPM_FAULT_COUNTERS_PER_NODE", 1, 100, &counters, error) ||
      !EnvInt("EPHPM_FAULT_TTL_MIN_MS", 50, 600000, &c->ttl_min_ms, error) ||
      !EnvInt("EPHPM_FAULT_TTL_MAX_MS", 50, 600000, &c->ttl_max_ms, error) ||
      !EnvInt("EPHPM_FAULT_MARGIN_MS", 0, 10000, &c->margin_ms, error) ||
      !EnvInt("EPHPM_FAULT_CLIENT_TIMEOUT_MS", 100, 600000, &c->client_timeout_ms, error) ||
      !EnvInt("EPHPM_FAULT_PROBE_MS", 10, 10000, &c->probe_ms, error) ||
      !EnvInt("EPHPM_FAULT_SUSPICION_MS", 10, 60000, &c->suspicion_ms, error) ||
      !EnvInt("EPHPM_FAULT_REQUEST_TIMEOUT_MS", 10, 60000, &c->request_timeout_ms, error)) {
    return false;
  }
  c->lock_threads = static_cast<int>(lock_threads);
  c->incr_threads = static_cast<int>(incr_threads);
  c->lock_keys_per_node = static_cast<int>(lock_keys);
  c->counters_per_node = static_cast<int>(counters);
  if (c->ttl_max_ms < c->ttl_min_ms) {
    *error = "EPHPM_FAULT_TTL_MAX_MS is below EPHPM_FAULT_TTL_MIN_MS";
    return false;
  }
  if (c->ttl_min_ms <= 2 * c->margin_ms) {
    *error = "EPHPM_FAULT_TTL_MIN_MS must be more than twice EPHPM_FAULT_MARGIN_MS";
    return false;
  }
  if (const char* s = std::getenv("EPHPM_FAULT_PARTITION"); s != nullptr && *s != '\0') {
    c->partition = s;
    if (c->partition != "report" && c->partition != "fail" && c->partition != "off") {
      *error = "EPHPM_FAULT_PARTITION must be report, fail or off";
      return false;
    }
  }
  if (c->arbiter.empty()) {
    const char* s = std::getenv("EPHPM_FAULT_ARBITER");
    c->arbiter = s != nullptr && *s != '\0' ? s : "gossip";
  }
  if (c->arbiter != "gossip" && c->arbiter != "etcd") {
    *error = "the arbiter (--arbiter, EPHPM_FAULT_ARBITER) must be gossip or etcd, not '" +
             c->arbiter + "'";
    return false;
  }
  if (!EnvInt("EPHPM_FAULT_ETCD_HEARTBEAT_MS", 10, 10000, &c->etcd_heartbeat_ms, error) ||
      !EnvInt("EPHPM_FAULT_ETCD_ELECTION_MS", 50, 60000, &c->etcd_election_ms, error) ||
      !EnvInt("EPHPM_FAULT_ETCD_TIMEOUT_MS", 10, 3600000, &c->etcd_timeout_ms, error) ||
      !EnvInt("EPHPM_FAULT_ETCD_LEASE_TTL", 2, 3600, &c->etcd_lease_ttl_s, error)) {
    return false;
  }
  if (const char* s = std::getenv("EPHPM_FAULT_ETCD"); s != nullptr && *s != '\0') {
    c->etcd_program = s;
  }
  // The default: every kind that has a target (the etcd faults only when
  // etcd decides; EPHPM_FAULT_KINDS=all,etcd runs them in gossip mode too,
  // against an etcd cluster nobody uses).
  std::string kinds = c->Strict() ? "all,etcd" : "all";
  if (const char* s = std::getenv("EPHPM_FAULT_KINDS"); s != nullptr && *s != '\0') kinds = s;
  c->kinds_text = kinds;
  std::stringstream ss(kinds);
  for (std::string k; std::getline(ss, k, ',');) {
    if (k == "all") {
      c->kinds.insert(std::begin(kAllKinds), std::end(kAllKinds));
    } else if (k == "etcd") {
      c->kinds.insert(std::begin(kEtcdKinds), std::end(kEtcdKinds));
    } else if (k == "none") {
    } else if (std::find(std::begin(kAllKinds), std::end(kAllKinds), k) != std::end(kAllKinds) ||
               std::find(std::begin(kEtcdKinds), std::end(kEtcdKinds), k) !=
                   std::end(kEtcdKinds)) {
      c->kinds.insert(k);
    } else {
      *error = "EPHPM_FAULT_KINDS: unknown kind '" + k + "' (all, etcd, none, or of: " +
               "pause-short pause-long kill kill-lagging delay-short delay-long delayrepl " +
               "etcd-kill-restart etcd-kill-leader)";
      return false;
    }
  }
  if (const char* s = std::getenv("EPHPM_FAULT_LOG_DIR"); s != nullptr && *s != '\0') {
    c->log_dir = s;
    c->keep_logs = true;
    ::mkdir(s, 0755);
  } else {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                        "/ephpm-fault-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
      *error = "mkdtemp " + templ + ": " + std::strerror(errno);
      return false;
    }
    c->log_dir = templ;
  }
  if (const char* s = std::getenv("EPHPM_FAULT_KEEP_LOGS"); s != nullptr && *s == '1') {
    c->keep_logs = true;
  }
  return true;
}

}  // namespace ephpm_fault
