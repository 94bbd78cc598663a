// A blocking RESP2 client with a deadline on every call, for the fault test's
// client threads.  A call that gets no whole reply in time (the node is
// paused, killed, or slow) closes the connection: a late reply would
// otherwise be read as the answer to the next request.
//
// Not thread-safe: one per thread.

#ifndef EPHPM_TESTS_FAULT_RESP_CLIENT_H_
#define EPHPM_TESTS_FAULT_RESP_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ephpm_fault {

struct Reply {
  enum Kind { kStatus, kError, kInt, kBulk, kNil, kArray } kind = kNil;
  std::string str;  // kStatus, kError (without the '+' / '-'), kBulk
  int64_t num = 0;  // kInt
  std::vector<Reply> elems;  // kArray

  bool IsStatus(const char* s) const { return kind == kStatus && str == s; }
  bool IsErrorPrefix(const char* prefix) const {
    return kind == kError && str.compare(0, std::char_traits<char>::length(prefix), prefix) == 0;
  }
  std::string Text() const;  // for reports: "+OK", ":3", "-ERR ...", "$..."
};

class RespClient {
 public:
  RespClient() = default;
  ~RespClient() { Close(); }
  RespClient(const RespClient&) = delete;
  RespClient& operator=(const RespClient&) = delete;

  // Connects to 127.0.0.1:port within timeout_ms; false with *error.
  bool Connect(uint16_t port, int timeout_ms, std::string* error);
  bool connected() const { return fd_ >= 0; }
  void Close();

  // Sends argv and reads one reply within timeout_ms.  False with *error
  // ("timeout", "closed", "malformed reply", ...) when none came: the
  // connection is then closed and the outcome of the request is unknown.
  bool Call(const std::vector<std::string>& argv, int timeout_ms, Reply* out, std::string* error);

  // Sends every command in one write, then reads their replies in order,
  // calling on_reply(i, reply) as each arrives, all within timeout_ms.
  // False with *error as for Call once a reply does not come: the replies
  // after the last on_reply are unknown outcomes.
  bool Pipeline(const std::vector<std::vector<std::string>>& commands, int timeout_ms,
                const std::function<void(size_t, const Reply&)>& on_reply, std::string* error);

 private:
  bool Send(const std::string& req, std::chrono::steady_clock::time_point deadline,
            std::string* error);
  bool Read(std::chrono::steady_clock::time_point deadline, Reply* out, std::string* error);

  int fd_ = -1;
  std::string in_;
};

}  // namespace ephpm_fault

#endif  // EPHPM_TESTS_FAULT_RESP_CLIENT_H_
