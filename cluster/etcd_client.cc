// The etcd v3 client over the JSON gateway (etcd_client.h).
//
// Boost.Beast's tcp_stream bounds only asynchronous operations, so every
// exchange is asynchronous on an io_context of the connection's own, run to
// completion by the calling thread: the call is synchronous for its caller
// and bounded by the deadline through tcp_stream's expiry.  A watch is the
// same on its own thread, where Cancel() stops the io_context to interrupt
// whatever it waits for.
//
// What the gateway (etcd 3.4.23) does, as checked against the real thing:
//  - 64-bit integers are JSON strings both ways (numbers are accepted too);
//    proto3 JSON drops false, zero and empty fields, so a missing field is
//    its zero value ("succeeded" of a failed transaction, TTL of a dead
//    lease, "type" of a PUT event).
//  - A definite error is a 4xx with {"error":"..","message":"..","code":N}
//    (the gRPC code): 404 code 5 for a lease not found, 400 code 3 for an
//    invalid argument.
//  - Without quorum a member holds a request about 6 s, then answers 500
//    {"error":"context deadline exceeded","code":2} (put, lease grant) or
//    503 code 14 "etcdserver: request timed out" (range).
//  - The streaming calls (lease keepalive, watch) wrap each message in
//    {"result":{..}}, and an error in {"error":{"grpc_code":14,
//    "http_code":503,"message":"etcdserver: no leader",..}}.
//  - Keepalive of an expired, revoked or unknown lease answers 200 with no
//    TTL (never an error); revoke of one answers 404 "requested lease not
//    found".
//  - A watch's stream answers {"result":{"created":true}} first; a start
//    revision already compacted answers {"result":{"canceled":true,
//    "compact_revision":"N"}} and the stream stays open: we end it.

#include "etcd_client.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <exception>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "ephpm/send_cork.h"
#include "mutex.h"

namespace ephpm {
namespace cluster {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using json = nlohmann::json;
using error_code = boost::system::error_code;

namespace {

// The largest answer read (a range over many keys, a watch message).
constexpr size_t kMaxBody = size_t{64} << 20;
// The pause before trying the endpoints again once each has failed.
constexpr int64_t kRetryPauseMs = 30;

std::chrono::steady_clock::time_point AtMs(int64_t ms) {
  return std::chrono::steady_clock::time_point(std::chrono::milliseconds(ms));
}

void SleepUntilMs(int64_t ms) { std::this_thread::sleep_until(AtMs(ms)); }

// An answer that does not parse: thrown while decoding, caught at the API.
class Malformed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---- decoding ---------------------------------------------------------------

const json& EmptyObject() {
  static const json* const kEmpty = new json(json::object());
  return *kEmpty;
}

// j[field] as an object; an empty one when missing.
const json& Obj(const json& j, const char* field) {
  if (!j.is_object()) throw Malformed("an object expected");
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return EmptyObject();
  if (!it->is_object()) throw Malformed(std::string("field ") + field + " is not an object");
  return *it;
}

// j[field] as an array; null when missing (iterate with Items).
const json* Arr(const json& j, const char* field) {
  if (!j.is_object()) throw Malformed("an object expected");
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return nullptr;
  if (!it->is_array()) throw Malformed(std::string("field ") + field + " is not an array");
  return &*it;
}

// An int64 field, a JSON string or number; 0 when missing.
int64_t Int(const json& j, const char* field) {
  if (!j.is_object()) throw Malformed("an object expected");
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_string()) {
    int64_t v = 0;
    if (absl::SimpleAtoi(it->get_ref<const std::string&>(), &v)) return v;
  }
  throw Malformed(std::string("field ") + field + " is not an int64");
}

bool Bool(const json& j, const char* field) {
  if (!j.is_object()) throw Malformed("an object expected");
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return false;
  if (it->is_boolean()) return it->get<bool>();
  throw Malformed(std::string("field ") + field + " is not a boolean");
}

std::string Str(const json& j, const char* field) {
  if (!j.is_object()) throw Malformed("an object expected");
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  throw Malformed(std::string("field ") + field + " is not a string");
}

// A bytes field (base64); empty when missing.
std::string Bytes(const json& j, const char* field) {
  std::string out;
  if (!absl::Base64Unescape(Str(j, field), &out)) {
    throw Malformed(std::string("field ") + field + " is not base64");
  }
  return out;
}

std::string B64(const std::string& bytes) { return absl::Base64Escape(bytes); }

EtcdKv DecodeKv(const json& j) {
  EtcdKv kv;
  kv.key = Bytes(j, "key");
  kv.value = Bytes(j, "value");
  kv.create_revision = Int(j, "create_revision");
  kv.mod_revision = Int(j, "mod_revision");
  kv.version = Int(j, "version");
  kv.lease = Int(j, "lease");
  return kv;
}

std::vector<EtcdKv> DecodeKvs(const json& j, const char* field) {
  std::vector<EtcdKv> out;
  if (const json* a = Arr(j, field)) {
    out.reserve(a->size());
    for (const json& e : *a) out.push_back(DecodeKv(e));
  }
  return out;
}

int64_t HeaderRevision(const json& j) { return Int(Obj(j, "header"), "revision"); }

// ---- encoding ---------------------------------------------------------------

json KeyRange(const std::string& key, const std::string& range_end) {
  json j = json::object();
  j["key"] = B64(key);
  if (!range_end.empty()) j["range_end"] = B64(range_end);
  return j;
}

json EncodeCompare(const EtcdCompare& c) {
  json j = json::object();
  j["key"] = B64(c.key);
  const std::string number = std::to_string(c.number);
  switch (c.target) {
    case EtcdCompare::Target::kVersion:
      j["target"] = "VERSION";
      j["version"] = number;
      break;
    case EtcdCompare::Target::kCreate:
      j["target"] = "CREATE";
      j["create_revision"] = number;
      break;
    case EtcdCompare::Target::kMod:
      j["target"] = "MOD";
      j["mod_revision"] = number;
      break;
    case EtcdCompare::Target::kValue:
      j["target"] = "VALUE";
      j["value"] = B64(c.value);
      break;
    case EtcdCompare::Target::kLease:
      j["target"] = "LEASE";
      j["lease"] = number;
      break;
  }
  switch (c.result) {
    case EtcdCompare::Result::kEqual:
      j["result"] = "EQUAL";
      break;
    case EtcdCompare::Result::kNotEqual:
      j["result"] = "NOT_EQUAL";
      break;
    case EtcdCompare::Result::kGreater:
      j["result"] = "GREATER";
      break;
    case EtcdCompare::Result::kLess:
      j["result"] = "LESS";
      break;
  }
  return j;
}

json EncodePut(const std::string& key, const std::string& value, int64_t lease) {
  json j = json::object();
  j["key"] = B64(key);
  j["value"] = B64(value);
  if (lease != 0) j["lease"] = std::to_string(lease);
  return j;
}

json EncodeOp(const EtcdOp& op) {
  json j = json::object();
  switch (op.kind) {
    case EtcdOp::Kind::kRange:
      j["request_range"] = KeyRange(op.key, op.range_end);
      break;
    case EtcdOp::Kind::kPut: {
      json put = EncodePut(op.key, op.value, op.lease);
      if (op.ignore_value) {
        put.erase("value");
        put["ignore_value"] = true;
      }
      j["request_put"] = std::move(put);
      break;
    }
    case EtcdOp::Kind::kDelete: {
      json d = KeyRange(op.key, op.range_end);
      if (op.prev_kv) d["prev_kv"] = true;
      j["request_delete_range"] = std::move(d);
      break;
    }
  }
  return j;
}

json EncodeOps(const std::vector<EtcdOp>& ops) {
  json a = json::array();
  for (const EtcdOp& op : ops) a.push_back(EncodeOp(op));
  return a;
}

// ---- errors -----------------------------------------------------------------

bool Contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

struct ErrorInfo {
  bool unavailable = false;  // retry elsewhere: the outcome is unknown
  std::string message;
};

// An answer with an error: a non-200 status, or a 200 whose body is a
// streaming call's {"error":{..}}.
ErrorInfo ClassifyError(unsigned status, const std::string& body) {
  std::string msg;
  int64_t code = -1;
  const json j = json::parse(body, nullptr, false);
  if (j.is_object()) {
    auto e = j.find("error");
    if (e != j.end()) {
      if (e->is_string()) {
        msg = e->get<std::string>();
      } else if (e->is_object()) {
        auto m = e->find("message");
        if (m != e->end() && m->is_string()) msg = m->get<std::string>();
        auto c = e->find("grpc_code");
        if (c != e->end() && c->is_number_integer()) code = c->get<int64_t>();
      }
    }
    auto m = j.find("message");
    if (msg.empty() && m != j.end() && m->is_string()) msg = m->get<std::string>();
    auto c = j.find("code");
    if (c != j.end() && c->is_number_integer()) code = c->get<int64_t>();
  }
  if (msg.empty()) msg = body.substr(0, 200);
  ErrorInfo info;
  info.message = "HTTP " + std::to_string(status) + ": " + msg;
  // gRPC codes: 1 CANCELLED, 4 DEADLINE_EXCEEDED, 10 ABORTED, 13 INTERNAL,
  // 14 UNAVAILABLE (etcd's "request timed out", "no leader", "leader
  // changed", "not capable", "server stopped" ...).
  info.unavailable = status >= 500 || status == 429 || status == 408 || code == 1 || code == 4 ||
                     code == 10 || code == 13 || code == 14 || Contains(msg, "timed out") ||
                     Contains(msg, "no leader") || Contains(msg, "leader changed") ||
                     Contains(msg, "too many requests") || Contains(msg, "deadline exceeded");
  return info;
}

// Errors of a write or read on a kept-alive connection the server had
// already closed: retried at once on a new connection.
bool IsClosedConnection(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::connection_aborted;
}

// "host:port" (or "[v6]:port") to addresses: an IP literal at once, a name
// through the resolver (blocking: give IP addresses for strict deadlines).
error_code Resolve(asio::io_context& io, const std::string& endpoint,
                   std::vector<tcp::endpoint>* out) {
  out->clear();
  const size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == endpoint.size()) {
    return asio::error::invalid_argument;
  }
  std::string host = endpoint.substr(0, colon);
  const std::string port = endpoint.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  uint32_t port_number = 0;
  if (!absl::SimpleAtoi(port, &port_number) || port_number == 0 || port_number > 65535) {
    return asio::error::invalid_argument;
  }
  error_code ec;
  const asio::ip::address addr = asio::ip::make_address(host, ec);
  if (!ec) {
    out->emplace_back(addr, static_cast<uint16_t>(port_number));
    return {};
  }
  tcp::resolver resolver(io);
  auto results = resolver.resolve(host, port, ec);
  if (ec) return ec;
  for (const auto& r : results) out->push_back(r.endpoint());
  if (out->empty()) return asio::error::host_not_found;
  return {};
}

// One keep-alive connection to one endpoint, with the io_context that runs
// its operations (on the calling thread).
struct Conn {
  explicit Conn(size_t ep) : endpoint(ep) {}
  asio::io_context io{1};
  beast::tcp_stream stream{io};
  beast::flat_buffer buffer;
  size_t endpoint;
  bool connected = false;
};

// Runs the operations `start` begins on `io` to completion (each bounded by
// its stream's expiry).  `io` must have no other work.
template <typename Start>
error_code RunOnce(asio::io_context& io, Start start) {
  SendCork::Release();  // this thread's cluster frames do not wait for etcd
  io.restart();
  error_code result = asio::error::would_block;
  start(&result);
  io.run();
  return result;
}

// Runs `f`, turning whatever it throws into a status (keeping what `f` set
// in it before, such as `sent`).
template <typename F>
EtcdStatus Guarded(F f) {
  EtcdStatus st;
  try {
    f(&st);
  } catch (const Malformed& e) {
    st.code = EtcdStatus::Code::kMalformed;
    st.message = std::string("malformed answer from etcd: ") + e.what();
  } catch (const json::exception& e) {
    st.code = EtcdStatus::Code::kMalformed;
    st.message = std::string("malformed answer from etcd: ") + e.what();
  } catch (const std::bad_alloc&) {
    st.code = EtcdStatus::Code::kUnavailable;
    st.message = "out of memory";
  } catch (const std::exception& e) {
    st.code = EtcdStatus::Code::kUnavailable;
    st.message = std::string("etcd client: ") + e.what();
  } catch (...) {
    st.code = EtcdStatus::Code::kUnavailable;
    st.message = "etcd client: unknown exception";
  }
  return st;
}

}  // namespace

// ---- EtcdOp -----------------------------------------------------------------

EtcdOp EtcdOp::Range(std::string key, std::string range_end) {
  EtcdOp op;
  op.kind = Kind::kRange;
  op.key = std::move(key);
  op.range_end = std::move(range_end);
  return op;
}

EtcdOp EtcdOp::Put(std::string key, std::string value, int64_t lease) {
  EtcdOp op;
  op.kind = Kind::kPut;
  op.key = std::move(key);
  op.value = std::move(value);
  op.lease = lease;
  return op;
}

EtcdOp EtcdOp::Delete(std::string key, bool prev_kv) {
  return DeleteRange(std::move(key), {}, prev_kv);
}

EtcdOp EtcdOp::DeleteRange(std::string key, std::string range_end, bool prev_kv) {
  EtcdOp op;
  op.kind = Kind::kDelete;
  op.key = std::move(key);
  op.range_end = std::move(range_end);
  op.prev_kv = prev_kv;
  return op;
}

std::string EtcdPrefixEnd(std::string prefix) {
  for (size_t i = prefix.size(); i-- > 0;) {
    const auto c = static_cast<unsigned char>(prefix[i]);
    if (c < 0xff) {
      prefix[i] = static_cast<char>(c + 1);
      prefix.resize(i + 1);
      return prefix;
    }
  }
  return std::string(1, '\0');
}

// ---- the client -------------------------------------------------------------

class EtcdClient::Impl {
 public:
  explicit Impl(EtcdClientOptions o) : o_(std::move(o)), idle_(o_.endpoints.size()) {}

  const EtcdClientOptions& options() const { return o_; }

  size_t Preferred() {
    MutexLock l(&mu_);
    return preferred_;
  }

  // POSTs `body` to `path`, from endpoint to endpoint until one answers
  // definitely or the deadline passes.  On kOk, *out is the answer.
  void Post(const char* path, const json& body, int64_t deadline_ms, EtcdStatus* st, json* out);

 private:
  struct Reply {
    unsigned status = 0;
    std::string body;
  };

  // One attempt on endpoint `ep`: true with *reply when it answered, false
  // with *error on a transport failure.  *sends: how many times the request
  // was sent (and so may have reached etcd).
  bool Attempt(size_t ep, const char* path, const std::string& payload, int64_t deadline_ms,
               Reply* reply, int* sends, std::string* error);
  error_code Connect(Conn* c, int64_t deadline_ms);
  error_code Exchange(Conn* c, const char* path, const std::string& payload, int64_t deadline_ms,
                      http::response<http::string_body>* res, bool* sent, bool* got_some);

  std::unique_ptr<Conn> Checkout(size_t ep);
  void Return(std::unique_ptr<Conn> c);
  // The next call starts at `ep` (it answered) / moves past it (it failed;
  // on a transport failure its idle connections, likely dead too, go).
  void Prefer(size_t ep);
  void Demote(size_t ep, bool drop_idle);

  const EtcdClientOptions o_;
  Mutex mu_;
  std::vector<std::vector<std::unique_ptr<Conn>>> idle_ ABSL_GUARDED_BY(mu_);
  size_t preferred_ ABSL_GUARDED_BY(mu_) = 0;
};

std::unique_ptr<Conn> EtcdClient::Impl::Checkout(size_t ep) {
  {
    MutexLock l(&mu_);
    auto& pool = idle_[ep];
    if (!pool.empty()) {
      std::unique_ptr<Conn> c = std::move(pool.back());
      pool.pop_back();
      return c;
    }
  }
  return std::make_unique<Conn>(ep);
}

void EtcdClient::Impl::Return(std::unique_ptr<Conn> c) {
  {
    MutexLock l(&mu_);
    auto& pool = idle_[c->endpoint];
    if (pool.size() < o_.max_idle_per_endpoint) {
      pool.push_back(std::move(c));
      return;
    }
  }
  // c closes here, with no lock held.
}

void EtcdClient::Impl::Prefer(size_t ep) {
  MutexLock l(&mu_);
  preferred_ = ep;
}

void EtcdClient::Impl::Demote(size_t ep, bool drop_idle) {
  std::vector<std::unique_ptr<Conn>> dropped;
  {
    MutexLock l(&mu_);
    if (preferred_ == ep) preferred_ = (ep + 1) % o_.endpoints.size();
    if (drop_idle) dropped.swap(idle_[ep]);
  }
  // They close here, with no lock held.
}

error_code EtcdClient::Impl::Connect(Conn* c, int64_t deadline_ms) {
  std::vector<tcp::endpoint> addrs;
  error_code ec = Resolve(c->io, o_.endpoints[c->endpoint], &addrs);
  if (ec) return ec;
  const int64_t until = std::min(deadline_ms, SteadyMs() + o_.connect_timeout_ms);
  ec = RunOnce(c->io, [&](error_code* result) {
    c->stream.expires_at(AtMs(until));
    c->stream.async_connect(addrs, [result](error_code e, const tcp::endpoint&) { *result = e; });
  });
  if (ec) return ec;
  error_code ignored;
  c->stream.socket().set_option(tcp::no_delay(true), ignored);
  c->connected = true;
  return {};
}

error_code EtcdClient::Impl::Exchange(Conn* c, const char* path, const std::string& payload,
                                      int64_t deadline_ms, http::response<http::string_body>* res,
                                      bool* sent, bool* got_some) {
  http::request<http::string_body> req{http::verb::post, path, 11};
  req.set(http::field::host, o_.endpoints[c->endpoint]);
  req.set(http::field::content_type, "application/json");
  req.keep_alive(true);
  req.body() = payload;
  req.prepare_payload();
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxBody);
  *sent = true;
  const error_code ec = RunOnce(c->io, [&](error_code* result) {
    c->stream.expires_at(AtMs(deadline_ms));
    http::async_write(c->stream, req, [&, result](error_code e, size_t) {
      if (e) {
        *result = e;
        return;
      }
      http::async_read(c->stream, c->buffer, parser,
                       [result](error_code e2, size_t) { *result = e2; });
    });
  });
  *got_some = parser.got_some();
  if (!ec) *res = parser.release();
  return ec;
}

bool EtcdClient::Impl::Attempt(size_t ep, const char* path, const std::string& payload,
                               int64_t deadline_ms, Reply* reply, int* sends,
                               std::string* error) {
  std::unique_ptr<Conn> c = Checkout(ep);
  const std::string& name = o_.endpoints[ep];
  for (int round = 0;; ++round) {
    const bool reused = c->connected;
    error_code ec;
    if (!reused) {
      ec = Connect(c.get(), deadline_ms);
      if (ec) {
        *error = name + ": connect: " + ec.message();
        return false;
      }
    }
    http::response<http::string_body> res;
    bool got_some = false, sent = false;
    ec = Exchange(c.get(), path, payload, deadline_ms, &res, &sent, &got_some);
    if (sent) ++*sends;
    if (!ec) {
      reply->status = res.result_int();
      reply->body = std::move(res.body());
      c->buffer.consume(c->buffer.size());
      if (res.keep_alive()) Return(std::move(c));
      return true;
    }
    // A kept-alive connection the server closed while it was idle: once
    // more at once on a new one.  (The server may also have died after it
    // read the request: *sends counts both, and the caller is told.)
    if (reused && round == 0 && !got_some && IsClosedConnection(ec) && SteadyMs() < deadline_ms) {
      c = std::make_unique<Conn>(ep);
      continue;
    }
    *error = name + ": " + ec.message();
    return false;
  }
}

void EtcdClient::Impl::Post(const char* path, const json& body, int64_t deadline_ms,
                            EtcdStatus* st, json* out) {
  const size_t n = o_.endpoints.size();
  if (n == 0) {
    st->code = EtcdStatus::Code::kUnavailable;
    st->message = "no etcd endpoints";
    return;
  }
  const std::string payload = body.dump();
  const size_t start = Preferred() % n;
  std::string last_error = "the deadline passed before any attempt";
  for (size_t attempt = 0;; ++attempt) {
    int64_t now = SteadyMs();
    if (now >= deadline_ms) break;
    if (attempt > 0 && attempt % n == 0) {  // every endpoint failed once more
      SleepUntilMs(std::min(deadline_ms, now + kRetryPauseMs));
      if (SteadyMs() >= deadline_ms) break;
    }
    const size_t ep = (start + attempt) % n;
    Reply reply;
    int sends = 0;
    std::string error;
    now = SteadyMs();
    const int64_t attempt_deadline =
        o_.attempt_timeout_ms > 0 ? std::min(deadline_ms, now + o_.attempt_timeout_ms) : deadline_ms;
    const bool answered = Attempt(ep, path, payload, attempt_deadline, &reply, &sends, &error);
    if (sends > 0) {
      if (st->sent || sends > 1) st->resent = true;
      st->sent = true;
    }
    if (!answered) {
      last_error = error;
      Demote(ep, true);
      continue;
    }
    if (reply.status == 200) {
      json j = json::parse(reply.body, nullptr, false);
      if (!j.is_object()) {
        st->code = EtcdStatus::Code::kMalformed;
        st->message = o_.endpoints[ep] + ": not a JSON object: " + reply.body.substr(0, 200);
        return;
      }
      if (!j.contains("error")) {
        Prefer(ep);
        st->code = EtcdStatus::Code::kOk;
        st->message.clear();
        *out = std::move(j);
        return;
      }
    }
    const ErrorInfo e = ClassifyError(reply.status, reply.body);
    if (e.unavailable) {
      last_error = o_.endpoints[ep] + ": " + e.message;
      Demote(ep, false);
      continue;
    }
    Prefer(ep);
    st->code = EtcdStatus::Code::kRejected;
    st->message = o_.endpoints[ep] + ": " + e.message;
    return;
  }
  st->code = EtcdStatus::Code::kUnavailable;
  st->message = "etcd unavailable before the deadline: " + last_error;
}

EtcdClient::EtcdClient(EtcdClientOptions o) : impl_(std::make_unique<Impl>(std::move(o))) {}

EtcdClient::~EtcdClient() = default;

EtcdStatus EtcdClient::Txn(const std::vector<EtcdCompare>& compare,
                           const std::vector<EtcdOp>& success, const std::vector<EtcdOp>& failure,
                           int64_t deadline_ms, EtcdTxnResult* out) {
  return Guarded([&](EtcdStatus* st) {
    json req = json::object();
    json c = json::array();
    for (const EtcdCompare& e : compare) c.push_back(EncodeCompare(e));
    req["compare"] = std::move(c);
    req["success"] = EncodeOps(success);
    req["failure"] = EncodeOps(failure);
    json j;
    impl_->Post("/v3/kv/txn", req, deadline_ms, st, &j);
    if (!st->ok()) return;
    EtcdTxnResult r;
    r.succeeded = Bool(j, "succeeded");
    r.revision = HeaderRevision(j);
    if (const json* a = Arr(j, "responses")) {
      for (const json& e : *a) {
        EtcdOpResult op;
        if (!e.is_object()) throw Malformed("a response is not an object");
        if (e.contains("response_range")) {
          op.kvs = DecodeKvs(Obj(e, "response_range"), "kvs");
        } else if (e.contains("response_delete_range")) {
          const json& d = Obj(e, "response_delete_range");
          op.deleted = Int(d, "deleted");
          op.kvs = DecodeKvs(d, "prev_kvs");
        }
        r.responses.push_back(std::move(op));
      }
    }
    if (out != nullptr) *out = std::move(r);
  });
}

EtcdStatus EtcdClient::Range(const std::string& key, const std::string& range_end,
                             int64_t deadline_ms, std::vector<EtcdKv>* kvs, int64_t* revision) {
  return Guarded([&](EtcdStatus* st) {
    json j;
    impl_->Post("/v3/kv/range", KeyRange(key, range_end), deadline_ms, st, &j);
    if (!st->ok()) return;
    std::vector<EtcdKv> found = DecodeKvs(j, "kvs");
    const int64_t rev = HeaderRevision(j);
    if (kvs != nullptr) *kvs = std::move(found);
    if (revision != nullptr) *revision = rev;
  });
}

EtcdStatus EtcdClient::Put(const std::string& key, const std::string& value, int64_t lease,
                           int64_t deadline_ms, int64_t* revision) {
  return Guarded([&](EtcdStatus* st) {
    json j;
    impl_->Post("/v3/kv/put", EncodePut(key, value, lease), deadline_ms, st, &j);
    if (!st->ok()) return;
    const int64_t rev = HeaderRevision(j);
    if (revision != nullptr) *revision = rev;
  });
}

EtcdStatus EtcdClient::LeaseGrant(int64_t ttl_s, int64_t deadline_ms, int64_t* id,
                                  int64_t* ttl_granted) {
  return Guarded([&](EtcdStatus* st) {
    json req = json::object();
    req["TTL"] = std::to_string(ttl_s);
    json j;
    impl_->Post("/v3/lease/grant", req, deadline_ms, st, &j);
    if (!st->ok()) return;
    const std::string error = Str(j, "error");
    if (!error.empty()) {
      st->code = EtcdStatus::Code::kRejected;
      st->message = "lease grant: " + error;
      return;
    }
    const int64_t lease = Int(j, "ID");
    const int64_t ttl = Int(j, "TTL");
    if (lease == 0) throw Malformed("lease grant without an ID");
    if (id != nullptr) *id = lease;
    if (ttl_granted != nullptr) *ttl_granted = ttl;
  });
}

EtcdStatus EtcdClient::LeaseKeepAlive(int64_t id, int64_t deadline_ms, int64_t* ttl_left) {
  return Guarded([&](EtcdStatus* st) {
    json req = json::object();
    req["ID"] = std::to_string(id);
    json j;
    impl_->Post("/v3/lease/keepalive", req, deadline_ms, st, &j);
    if (!st->ok()) return;
    if (!j.contains("result")) throw Malformed("keepalive answer without a result");
    const int64_t ttl = Int(Obj(j, "result"), "TTL");
    if (ttl_left != nullptr) *ttl_left = ttl < 0 ? 0 : ttl;
  });
}

EtcdStatus EtcdClient::LeaseRevoke(int64_t id, int64_t deadline_ms) {
  return Guarded([&](EtcdStatus* st) {
    json req = json::object();
    req["ID"] = std::to_string(id);
    json j;
    impl_->Post("/v3/lease/revoke", req, deadline_ms, st, &j);
  });
}

// ---- watches ----------------------------------------------------------------

namespace {

class WatchImpl final : public EtcdClient::Watch {
 public:
  using OnEvents = std::function<void(const std::vector<EtcdEvent>&, int64_t)>;
  using OnEnd = std::function<void(const std::string&)>;

  WatchImpl(std::vector<std::string> endpoints, size_t first, int64_t connect_timeout_ms,
            int64_t create_timeout_ms, std::string body, OnEvents on_events, OnEnd on_end)
      : endpoints_(std::move(endpoints)),
        first_(first),
        connect_timeout_ms_(connect_timeout_ms),
        create_timeout_ms_(create_timeout_ms),
        body_(std::move(body)),
        on_events_(std::move(on_events)),
        on_end_(std::move(on_end)) {}

  ~WatchImpl() override { Cancel(); }

  // Starts the thread; false if it could not be.
  bool Start() {
    try {
      thread_ = std::thread([this] { Run(); });
      return true;
    } catch (const std::system_error&) {
      return false;
    }
  }

  void Cancel() override {
    std::lock_guard<std::mutex> l(cancel_mu_);
    cancelled_.store(true);
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  // Runs what `start` begins until it completes, unless Cancel stops it
  // (operation_aborted).  The flag is checked after restart(): a stop()
  // that came before restart() is seen through it, one after ends run().
  template <typename Start>
  error_code Step(Start start) {
    io_.restart();
    if (cancelled_.load()) return asio::error::operation_aborted;
    error_code result = asio::error::would_block;
    start(&result);
    io_.run();
    if (cancelled_.load()) return asio::error::operation_aborted;
    return result;
  }

  void Run() {
    std::string reason;
    try {
      reason = Stream();
    } catch (const std::exception& e) {
      reason = std::string("watch failed: ") + e.what();
    } catch (...) {
      reason = "watch failed";
    }
    if (cancelled_.load()) return;
    try {
      on_end_(reason);
    } catch (...) {
    }
  }

  // The whole stream; returns why it ended.
  std::string Stream() {
    const int64_t create_deadline = SteadyMs() + create_timeout_ms_;
    std::string errors;
    bool connected = false;
    std::string host;
    for (size_t i = 0; i < endpoints_.size() && !connected; ++i) {
      if (cancelled_.load()) return "canceled";
      host = endpoints_[(first_ + i) % endpoints_.size()];
      std::vector<tcp::endpoint> addrs;
      error_code ec = Resolve(io_, host, &addrs);
      if (!ec) {
        const int64_t until = std::min(create_deadline, SteadyMs() + connect_timeout_ms_);
        ec = Step([&](error_code* result) {
          stream_.expires_at(AtMs(until));
          stream_.async_connect(addrs, [result](error_code e, const tcp::endpoint&) { *result = e; });
        });
      }
      if (!ec) {
        connected = true;
      } else {
        if (!errors.empty()) errors += "; ";
        errors += host + ": " + ec.message();
      }
    }
    if (!connected) return "no etcd endpoint reachable: " + errors;

    http::request<http::string_body> req{http::verb::post, "/v3/watch", 11};
    req.set(http::field::host, host);
    req.set(http::field::content_type, "application/json");
    req.body() = body_;
    req.prepare_payload();
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);  // the stream has no end
    error_code ec = Step([&](error_code* result) {
      stream_.expires_at(AtMs(create_deadline));
      http::async_write(stream_, req, [&, result](error_code e, size_t) {
        if (e) {
          *result = e;
          return;
        }
        http::async_read_header(stream_, buffer_, parser,
                                [result](error_code e2, size_t) { *result = e2; });
      });
    });
    if (ec == beast::error::timeout) return host + ": no answer to the watch request in time";
    if (ec) return host + ": watch request: " + ec.message();
    const unsigned status = parser.get().result_int();

    std::vector<char> chunk(64 * 1024);
    std::string pending;
    bool created = false;
    for (;;) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      ec = Step([&](error_code* result) {
        if (created) {
          stream_.expires_never();
        } else {
          stream_.expires_at(AtMs(create_deadline));
        }
        http::async_read_some(stream_, buffer_, parser,
                              [result](error_code e, size_t) { *result = e; });
      });
      if (ec == http::error::need_buffer) ec = {};
      const size_t got = chunk.size() - parser.get().body().size;
      pending.append(chunk.data(), got);
      if (pending.size() > kMaxBody) return host + ": watch message too large";
      if (status != 200) {
        if (ec || parser.is_done() || pending.size() > 4096) {
          const ErrorInfo e = ClassifyError(status, pending);
          return host + ": watch refused: " + e.message;
        }
        continue;
      }
      size_t line_start = 0;
      for (size_t nl; (nl = pending.find('\n', line_start)) != std::string::npos;) {
        std::string end;
        if (Message(pending.substr(line_start, nl - line_start), &created, &end)) {
          return host + ": " + end;
        }
        line_start = nl + 1;
      }
      pending.erase(0, line_start);
      if (ec) {
        if (ec == asio::error::operation_aborted) return "canceled";
        if (!created && ec == beast::error::timeout) {
          return host + ": no answer to the watch request in time";
        }
        return host + ": watch connection lost: " + ec.message();
      }
      if (parser.is_done()) return host + ": the watch stream ended";
    }
  }

  // One message of the stream: events for on_events, or the end (true with
  // *end).
  bool Message(const std::string& line, bool* created, std::string* end) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) return false;
    const json j = json::parse(line, nullptr, false);
    if (!j.is_object()) {
      *end = "malformed watch message: " + line.substr(0, 200);
      return true;
    }
    if (j.contains("error")) {
      *end = "watch error: " + ClassifyError(200, line).message;
      return true;
    }
    try {
      const json& r = Obj(j, "result");
      if (Bool(r, "created")) *created = true;
      if (Bool(r, "canceled")) {
        const int64_t compact = Int(r, "compact_revision");
        if (compact > 0) {
          *end = "compacted: revisions before " + std::to_string(compact) + " are gone";
        } else {
          *end = "canceled by etcd: " + Str(r, "cancel_reason");
        }
        return true;
      }
      const json* events = Arr(r, "events");
      if (events == nullptr || events->empty()) return false;
      std::vector<EtcdEvent> batch;
      batch.reserve(events->size());
      for (const json& e : *events) {
        EtcdEvent ev;
        const auto type = e.find("type");
        if (type != e.end()) {
          ev.deleted = (type->is_string() && type->get<std::string>() == "DELETE") ||
                       (type->is_number_integer() && type->get<int64_t>() == 1);
        }
        ev.kv = DecodeKv(Obj(e, "kv"));
        batch.push_back(std::move(ev));
      }
      const int64_t revision = HeaderRevision(r);
      if (cancelled_.load()) return false;
      on_events_(batch, revision);
      return false;
    } catch (const Malformed& e) {
      *end = std::string("malformed watch message: ") + e.what();
      return true;
    } catch (const json::exception& e) {
      *end = std::string("malformed watch message: ") + e.what();
      return true;
    }
  }

  const std::vector<std::string> endpoints_;
  const size_t first_;
  const int64_t connect_timeout_ms_;
  const int64_t create_timeout_ms_;
  const std::string body_;
  const OnEvents on_events_;
  const OnEnd on_end_;

  std::atomic<bool> cancelled_{false};
  std::mutex cancel_mu_;  // one Cancel at a time (the join)
  // Used by the watch's thread only (io_.stop() excepted).
  asio::io_context io_{1};
  beast::tcp_stream stream_{io_};
  beast::flat_buffer buffer_;
  std::thread thread_;
};

// A watch that could not start.
class DeadWatch final : public EtcdClient::Watch {
 public:
  void Cancel() override {}
};

}  // namespace

std::unique_ptr<EtcdClient::Watch> EtcdClient::StartWatch(
    const std::string& key, const std::string& range_end, int64_t start_revision,
    std::function<void(const std::vector<EtcdEvent>&, int64_t revision)> on_events,
    std::function<void(const std::string& reason)> on_end) {
  std::unique_ptr<WatchImpl> w;
  std::function<void(const std::string&)> end_copy;
  try {
    end_copy = on_end;
    json create = KeyRange(key, range_end);
    if (start_revision > 0) create["start_revision"] = std::to_string(start_revision);
    json req = json::object();
    req["create_request"] = std::move(create);
    const EtcdClientOptions& o = impl_->options();
    w = std::make_unique<WatchImpl>(o.endpoints, o.endpoints.empty() ? 0 : impl_->Preferred(),
                                    o.connect_timeout_ms, o.watch_create_timeout_ms, req.dump(),
                                    std::move(on_events), std::move(on_end));
    if (w->Start()) return w;
  } catch (...) {
  }
  // No thread: the watch ended before it began.
  try {
    if (end_copy) end_copy("cannot start the watch thread");
  } catch (...) {
  }
  if (w != nullptr) return w;  // Cancel() has no thread to join
  try {
    return std::make_unique<DeadWatch>();
  } catch (...) {
    return nullptr;
  }
}

}  // namespace cluster
}  // namespace ephpm
