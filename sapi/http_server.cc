#include "http_server.h"

#include <sys/stat.h>
#include <time.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>
#include <vector>

#include "net/listener.h"
#include "net/session_registry.h"
#include "php_host.h"
#include "router.h"

namespace ephpm {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// Boost 1.74's beast::string_view is boost's, not std's.
std::string_view SV(beast::string_view s) { return {s.data(), s.size()}; }
beast::string_view BV(std::string_view s) { return {s.data(), s.size()}; }

std::string HttpDate(time_t t) {
  char buf[64];
  struct tm tm;
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

bool ParseHttpDate(const std::string& s, time_t* out) {
  struct tm tm {};
  const char* end = strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return false;
  *out = timegm(&tm);
  return true;
}

// Whether an If-None-Match list names `etag` (or is "*").
bool EtagMatches(std::string_view header, std::string_view etag) {
  size_t pos = 0;
  while (pos < header.size()) {
    while (pos < header.size() && (header[pos] == ' ' || header[pos] == ',')) ++pos;
    size_t end = header.find(',', pos);
    if (end == std::string_view::npos) end = header.size();
    std::string_view tag = header.substr(pos, end - pos);
    while (!tag.empty() && tag.back() == ' ') tag.remove_suffix(1);
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);  // weak comparison
    if (tag == "*" || tag == etag) return true;
    pos = end + 1;
  }
  return false;
}

}  // namespace

class HttpServer::Impl {
 public:
  class Session;

  Impl(PhpHost* php, HttpServerOptions o)
      : php_(php),
        options_(std::move(o)),
        accept_strand_(asio::make_strand(io_)),
        acceptor_(io_),
        accept_retry_(accept_strand_) {}

  ~Impl() { Stop(); }

  bool Start(std::string* error) {
    char resolved[PATH_MAX];
    if (realpath(options_.document_root.c_str(), resolved) == nullptr) {
      *error = "document root '" + options_.document_root + "' does not exist";
      return false;
    }
    docroot_ = resolved;
    if (!net::Listen(&acceptor_, options_.bind_address, options_.port, error)) return false;
    bound_ = acceptor_.local_endpoint();
    // Keeps io_.run() going while requests wait on PHP with no socket
    // operation pending (after Stop() closed the acceptor, nothing else would).
    work_.emplace(asio::make_work_guard(io_));
    Accept();
    for (size_t i = 0; i < std::max<size_t>(1, options_.io_threads); ++i) {
      threads_.emplace_back([this] { io_.run(); });
    }
    return true;
  }

  void Stop() {
    if (stopped_.exchange(true)) return;
    draining_.store(true);
    // On the accept strand, where the accept's handler runs: asio's
    // acceptor is not safe for concurrent use.
    asio::post(accept_strand_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
      accept_retry_.cancel();
      for (const auto& s : sessions_.Live()) s->CloseIfIdle();
    });
    // Requests in flight finish; their connections then close.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      if (sessions_.Empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  uint16_t port() const { return bound_.port(); }
  std::string address() const {
    return net::EndpointText(bound_);
  }

  // A connection's stream and timer run on its strand, named by its type:
  // a type-erased executor is copied onto the heap for every socket
  // operation's work tracking (as the RESP session's and the cluster
  // link's, docs/BENCHMARKS.md "Issue 19, target 3: the cluster link on a
  // typed strand").
  using Strand = asio::strand<asio::io_context::executor_type>;
  using Stream = beast::basic_stream<tcp, Strand>;
  using Timer = asio::basic_waitable_timer<std::chrono::steady_clock,
                                           asio::wait_traits<std::chrono::steady_clock>, Strand>;

  class Session : public std::enable_shared_from_this<Session> {
   public:
    Session(Impl* server, Stream::socket_type socket)
        : server_(server), stream_(std::move(socket)), timer_(stream_.get_executor()) {
      boost::system::error_code ec;
      remote_ = stream_.socket().remote_endpoint(ec);
      local_ = stream_.socket().local_endpoint(ec);
    }

    ~Session() {
      server_->sessions_.Remove(this);
    }

    void Start() {
      server_->sessions_.Add(this);
      asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->ReadHeader(); });
    }

    // From Stop(): an idle connection closes now, a busy one after its reply.
    void CloseIfIdle() {
      asio::post(stream_.get_executor(), [self = shared_from_this()] {
        if (!self->busy_) self->Close();
      });
    }

   private:
    void ReadHeader() {
      if (server_->draining_.load()) return Close();
      parser_.emplace();
      parser_->header_limit(static_cast<uint32_t>(server_->options_.max_header_bytes));
      parser_->body_limit(server_->options_.max_body_bytes);
      ArmReceiveTimer(first_ ? server_->options_.request_timeout_seconds
                             : server_->options_.idle_timeout_seconds);
      http::async_read_header(
          stream_, buffer_, *parser_,
          [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
    }

    void OnHeader(beast::error_code ec) {
      first_ = false;
      DisarmReceiveTimer();
      if (ec) return Fail(ec, /*idle=*/buffer_.size() == 0);
      busy_ = true;
      auto& req = parser_->get();
      if (beast::iequals(req[http::field::expect], "100-continue") && !parser_->is_done()) {
        if (parser_->content_length() &&
            *parser_->content_length() > server_->options_.max_body_bytes) {
          return Error(413, "Payload Too Large", true);
        }
        // The client waits for this before it sends the body.
        auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
        stream_.expires_after(std::chrono::seconds(server_->options_.request_timeout_seconds));
        http::async_write(stream_, *cont, [self = shared_from_this(), cont](beast::error_code e, size_t) {
          if (e) return self->Close();
          self->ReadBody();
        });
        return;
      }
      ReadBody();
    }

    void ReadBody() {
      if (parser_->is_done()) return Handle();
      ArmReceiveTimer(server_->options_.request_timeout_seconds);
      http::async_read(stream_, buffer_, *parser_,
                       [self = shared_from_this()](beast::error_code ec, size_t) {
                         self->DisarmReceiveTimer();
                         if (ec) return self->Fail(ec, false);
                         self->Handle();
                       });
    }

    // A read that failed: answer what deserves an answer, then close.
    void Fail(beast::error_code ec, bool idle) {
      if (timed_out_) {
        if (idle) return Close();  // a kept-alive connection nobody used
        return Error(408, "Request Timeout", true);
      }
      if (ec == http::error::end_of_stream || ec == asio::error::eof ||
          ec == asio::error::connection_reset || ec == asio::error::operation_aborted) {
        return Close();
      }
      if (ec == http::error::header_limit) return Error(431, "Request Header Fields Too Large", true);
      if (ec == http::error::body_limit) return Error(413, "Payload Too Large", true);
      return Error(400, "Bad Request", true);
    }

    void Error(int status, std::string_view text, bool close) {
      busy_ = true;
      auto res = std::make_shared<http::response<http::string_body>>();
      res->version(11);
      res->result(static_cast<unsigned>(status));
      res->set(http::field::content_type, "text/plain; charset=utf-8");
      res->body() = std::string(text) + "\n";
      method_ = parser_ && parser_->is_header_done() ? std::string(parser_->get().method_string())
                                                     : "-";
      target_ = parser_ && parser_->is_header_done() ? std::string(parser_->get().target()) : "-";
      Send(res, close);
    }

    void Handle() {
      auto& req = parser_->get();
      started_ = std::chrono::steady_clock::now();
      method_ = std::string(req.method_string());
      target_ = std::string(req.target());
      keep_alive_ = req.keep_alive();
      http10_ = req.version() == 10;
      head_ = req.method() == http::verb::head;

      std::string_view target = SV(req.target());
      if (target.substr(0, 7) == "http://" || target.substr(0, 8) == "https://") {
        const size_t slash = target.find('/', target.find("//") + 2);  // absolute-form
        target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
      }
      const size_t q = target.find('?');
      const std::string_view path = target.substr(0, q);
      const std::string_view query = q == std::string_view::npos ? "" : target.substr(q + 1);

      const Route route = ResolveRoute(server_->docroot_, path, server_->options_.symlinks);
      switch (route.kind) {
        case Route::Kind::kBadRequest: return Error(400, "Bad Request", !keep_alive_);
        case Route::Kind::kForbidden: return Error(403, "Forbidden", !keep_alive_);
        case Route::Kind::kNotFound: return Error(404, "Not Found", !keep_alive_);
        case Route::Kind::kStatic: return ServeStatic(route);
        case Route::Kind::kPhp: return ServePhp(route, std::string(target), std::string(query));
      }
    }

    void ServeStatic(const Route& route) {
      auto& req = parser_->get();
      if (req.method() != http::verb::get && req.method() != http::verb::head) {
        auto res = std::make_shared<http::response<http::string_body>>(
            http::status::method_not_allowed, 11);
        res->set(http::field::allow, "GET, HEAD");
        res->set(http::field::content_type, "text/plain; charset=utf-8");
        res->body() = "Method Not Allowed\n";
        return Send(res, !keep_alive_);
      }
      struct stat st;
      if (stat(route.file.c_str(), &st) != 0) return Error(404, "Not Found", !keep_alive_);
      char etag[64];
      std::snprintf(etag, sizeof etag, "\"%llx-%llx\"",
                    static_cast<unsigned long long>(st.st_mtim.tv_sec) * 1000000000ull +
                        static_cast<unsigned long long>(st.st_mtim.tv_nsec),
                    static_cast<unsigned long long>(st.st_size));
      const std::string last_modified = HttpDate(st.st_mtime);
      bool not_modified = false;
      if (auto inm = req.find(http::field::if_none_match); inm != req.end()) {
        not_modified = EtagMatches(SV(inm->value()), etag);
      } else if (auto ims = req.find(http::field::if_modified_since); ims != req.end()) {
        time_t since = 0;
        not_modified = ParseHttpDate(std::string(ims->value()), &since) && st.st_mtime <= since;
      }
      auto headers = [&](auto& res) {
        res.set(http::field::content_type, BV(MimeTypeFor(route.file)));
        res.set(http::field::last_modified, last_modified);
        res.set(http::field::etag, etag);
      };
      if (not_modified) {
        auto res = std::make_shared<http::response<http::empty_body>>(http::status::not_modified, 11);
        headers(*res);
        return Send(res, !keep_alive_);
      }
      if (head_) {
        auto empty = std::make_shared<http::response<http::empty_body>>(http::status::ok, 11);
        headers(*empty);
        empty->content_length(static_cast<uint64_t>(st.st_size));
        return Send(empty, !keep_alive_, /*keep_length=*/true);
      }
      http::file_body::value_type body;
      beast::error_code ec;
      body.open(route.file.c_str(), beast::file_mode::scan, ec);
      if (ec) return Error(403, "Forbidden", !keep_alive_);
      auto res = std::make_shared<http::response<http::file_body>>(http::status::ok, 11);
      headers(*res);
      res->body() = std::move(body);
      Send(res, !keep_alive_);
    }

    void ServePhp(const Route& route, std::string target, std::string query) {
      auto& req = parser_->get();
      auto q = std::make_shared<PhpRequest>();
      q->method = std::string(req.method_string());
      q->uri = std::move(target);
      q->query = std::move(query);
      q->protocol = req.version() == 10 ? "HTTP/1.0" : "HTTP/1.1";
      for (const auto& f : req) q->headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
      q->body = std::move(req.body());
      q->script_filename = route.file;
      q->script_name = route.script_name;
      q->path_info = route.path_info;
      q->document_root = server_->docroot_;
      q->remote_addr = remote_.address().to_string();
      q->remote_port = remote_.port();
      q->server_addr = local_.address().to_string();
      q->server_port = local_.port();
      std::string host(req[http::field::host]);
      if (const size_t colon = host.rfind(':');
          colon != std::string::npos && host.find(']') == std::string::npos) {
        host.resize(colon);
      }
      q->server_name = host.empty() ? q->server_addr : host;
      server_->php_->Submit(q, [self = shared_from_this()](PhpResponse r) {
        // Back on this connection's strand to answer.
        asio::post(self->stream_.get_executor(),
                   [self, r = std::move(r)]() mutable { self->ReplyPhp(std::move(r)); });
      });
    }

    void ReplyPhp(PhpResponse r) {
      auto res = std::make_shared<http::response<http::string_body>>();
      res->version(11);
      res->result(static_cast<unsigned>(r.status));
      for (auto& [name, value] : r.headers) {
        // The server frames the body itself.  For HEAD, PHP discarded the
        // body (headers_only), so its length is unknown: only a
        // Content-Length the script set itself is passed on (RFC 9110 8.6:
        // a HEAD response carries the GET's length or none).
        const bool valid_length = !value.empty() && value.size() <= 18 &&
                                  value.find_first_not_of("0123456789") == std::string::npos;
        if ((beast::iequals(name, "Content-Length") && (!head_ || !valid_length)) ||
            beast::iequals(name, "Transfer-Encoding") || beast::iequals(name, "Connection")) {
          continue;
        }
        res->insert(name, value);
      }
      if (!head_) {
        res->body() = std::move(r.body);
        res->content_length(res->body().size());
      }
      Send(res, !keep_alive_, /*keep_length=*/true);
    }

    template <typename Response>
    void Send(std::shared_ptr<Response> res, bool close, bool keep_length = false) {
      close = close || server_->draining_.load();
      res->set(http::field::server, "ephpm");
      res->set(http::field::date, HttpDate(time(nullptr)));
      res->keep_alive(!close);
      // An HTTP/1.0 client keeps the connection only when the response says
      // so (RFC 9112 9.3, and what ab -k, for one, waits for): without the
      // header it reads to the end of the stream, which never comes.
      if (!close && http10_) res->set(http::field::connection, "keep-alive");
      if (!keep_length) res->prepare_payload();
      status_ = static_cast<int>(res->result_int());
      bytes_ = res->has_content_length() ? std::stoull(std::string(res->at(http::field::content_length))) : 0;
      stream_.expires_after(std::chrono::seconds(server_->options_.request_timeout_seconds));
      http::async_write(stream_, *res, [self = shared_from_this(), res, close](beast::error_code ec, size_t) {
        self->Logged();
        self->busy_ = false;
        if (ec || close) return self->Close();
        self->ReadHeader();
      });
    }

    void Logged() {
      if (!server_->options_.access_log) return;
      const double ms = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - started_)
                            .count();
      char line[512];
      std::snprintf(line, sizeof line, "%s:%u \"%s %.300s\" %d %llu %.1fms",
                    remote_.address().to_string().c_str(), remote_.port(), method_.c_str(),
                    target_.c_str(), status_, static_cast<unsigned long long>(bytes_), ms);
      server_->options_.access_log(line);
    }

    // Receiving a request is timed by a timer of our own: Beast's stream
    // timeout closes the socket, which would leave no way to answer 408.  On
    // expiry this cancels the read, which then fails with timed_out_ set.
    void ArmReceiveTimer(int64_t seconds) {
      stream_.expires_never();
      timed_out_ = false;
      const uint64_t gen = ++timer_gen_;
      timer_.expires_after(std::chrono::seconds(seconds));
      timer_.async_wait([self = shared_from_this(), gen](beast::error_code ec) {
        if (ec || gen != self->timer_gen_) return;  // cancelled, or a later read's
        self->timed_out_ = true;
        beast::error_code ignored;
        self->stream_.socket().cancel(ignored);
      });
    }
    void DisarmReceiveTimer() {
      ++timer_gen_;
      timer_.cancel();
    }

    void Close() {
      DisarmReceiveTimer();  // its handler holds this session
      beast::error_code ec;
      stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
      stream_.close();
    }

    Impl* const server_;
    Stream stream_;
    Timer timer_;  // receiving a request (ArmReceiveTimer)
    uint64_t timer_gen_ = 0;
    bool timed_out_ = false;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::string_body>> parser_;
    tcp::endpoint remote_, local_;
    bool first_ = true;
    bool busy_ = false;
    bool keep_alive_ = false;
    bool http10_ = false;  // the request being answered is HTTP/1.0
    bool head_ = false;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    std::string method_ = "-", target_ = "-";
    int status_ = 0;
    uint64_t bytes_ = 0;
  };

 private:
  void Accept() {
    // The handler runs on accept_strand_, as does Stop's close.
    acceptor_.async_accept(
        asio::make_strand(io_),
        asio::bind_executor(accept_strand_, [this](beast::error_code ec, Stream::socket_type s) {
          if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
          if (ec) {
            // E.g. out of file descriptors: the connection stays queued; retry
            // a little later (net::kAcceptRetryDelay), not at once.
            accept_retry_.expires_after(net::kAcceptRetryDelay);
            accept_retry_.async_wait([this](beast::error_code e) {
              if (!e && !stopped_.load() && acceptor_.is_open()) Accept();
            });
            return;
          }
          std::make_shared<Session>(this, std::move(s))->Start();
          Accept();
        }));
  }

  PhpHost* const php_;
  const HttpServerOptions options_;
  std::string docroot_;
  asio::io_context io_;
  // The acceptor's handlers and its close run here, one at a time.
  asio::strand<asio::io_context::executor_type> accept_strand_;
  tcp::acceptor acceptor_;
  // Waits before accepting again after a failed accept (Accept); on
  // accept_strand_.
  asio::steady_timer accept_retry_;
  tcp::endpoint bound_;
  std::vector<std::thread> threads_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::atomic<bool> stopped_{false};
  std::atomic<bool> draining_{false};
  // Every connection, for Stop().
  net::SessionRegistry<Session> sessions_;
};

HttpServer::HttpServer(PhpHost* php, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(php, std::move(options))) {}
HttpServer::~HttpServer() = default;
bool HttpServer::Start(std::string* error) { return impl_->Start(error); }
void HttpServer::Stop() { impl_->Stop(); }
uint16_t HttpServer::port() const { return impl_->port(); }
std::string HttpServer::address() const { return impl_->address(); }

}  // namespace ephpm
