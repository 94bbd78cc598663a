// HTTP/1.1 for the host, on Boost.Beast: keep-alive, header and body size
// limits (431/413), a request timeout, static files with MIME types and
// conditional GET, PHP requests handed to the PHP workers.  I/O runs on its
// own threads; PHP never runs on them.

#ifndef EPHPM_SAPI_HTTP_SERVER_H_
#define EPHPM_SAPI_HTTP_SERVER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "router.h"

namespace ephpm {

class PhpHost;

struct HttpServerOptions {
  std::string bind_address = "127.0.0.1";
  uint16_t port = 8131;  // 0: any free port
  std::string document_root;  // must exist
  Symlinks symlinks = Symlinks::kFollow;  // what a symlink in it may lead to
  size_t max_header_bytes = 16 * 1024;         // larger: 431
  size_t max_body_bytes = 64ull * 1024 * 1024;  // larger: 413
  int64_t request_timeout_seconds = 60;  // to receive a whole request
  int64_t idle_timeout_seconds = 15;     // a kept-alive connection with no request
  size_t io_threads = 2;
  // One line per request (the access log), and the server's own messages.
  std::function<void(std::string_view)> access_log;
  std::function<void(std::string_view)> error_log;
};

class HttpServer {
 public:
  HttpServer(PhpHost* php, HttpServerOptions options);
  ~HttpServer();

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  bool Start(std::string* error);
  // Stops accepting, lets requests in flight finish (idle connections are
  // closed), then stops.  Idempotent.
  void Stop();

  uint16_t port() const;
  std::string address() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ephpm

#endif  // EPHPM_SAPI_HTTP_SERVER_H_
