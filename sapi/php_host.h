// PHP embedded in the host program: a SAPI named "ephpm" over libphp, with
// the ephpm extension (and its session handler) compiled in and bound to the
// host's store through the ops table.
//
// Requests run on PHP worker threads, each request with its own
// php_request_startup / php_request_shutdown (the shutdown also after a fatal
// error or exit(), which is what releases session locks).  A non-thread-safe
// PHP has exactly one worker.

#ifndef EPHPM_SAPI_PHP_HOST_H_
#define EPHPM_SAPI_PHP_HOST_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ephpm/kv_ops.h"
#include "php_request.h"

namespace ephpm {

struct PhpHostOptions {
  // INI settings, as -d gives them (ephpm.* store settings included, so that
  // ini_get() and phpinfo() show the values the store was built from).
  std::vector<std::pair<std::string, std::string>> ini;
  std::string ini_file;  // a php.ini to load ("" = none: no system ini either)
  size_t workers = 1;    // PHP worker threads (1 without a thread-safe PHP)
  // Where PHP's own log lines go (errors with log_errors=1, error_log()).
  std::function<void(std::string_view)> log;
};

class PhpHost {
 public:
  // Installs `ops` as the extension's table, starts PHP and its workers.
  // Null with *error when PHP cannot start.
  static std::unique_ptr<PhpHost> Start(const PhpHostOptions& options, const ephpm_kv_ops* ops,
                                        std::string* error);
  // Finishes the queued requests, then shuts PHP down.
  ~PhpHost();

  PhpHost(const PhpHost&) = delete;
  PhpHost& operator=(const PhpHost&) = delete;

  // Queues a request; `done` runs on a worker thread with the response.
  void Submit(std::shared_ptr<PhpRequest> request, std::function<void(PhpResponse)> done);

  // Requests queued or running.
  size_t pending() const;

  // Whether this PHP is thread-safe (ZTS), so that workers > 1 is possible.
  static bool ThreadSafe();

  class Impl;

 private:
  explicit PhpHost(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ephpm

#endif  // EPHPM_SAPI_PHP_HOST_H_
