// The request side of RESP2 as Redis 7.0 reads it: multibulk requests
// ("*<n>\r\n" then n times "$<len>\r\n<bytes>\r\n") and inline requests (one
// line of space-separated, optionally quoted words).  No dependencies beyond
// the standard library, so that a fuzzer build can compile it on its own.
//
// Every outcome is the one Redis 7.0's processInlineBuffer and
// processMultibulkBuffer give for the same bytes, including their quirks:
//   * The two bytes after a bulk payload are skipped, not checked, and so is
//     the byte after the '\r' that ends a "*<n>" or "$<len>" line.
//   * A "*<n>" or "$<len>" line ends at the first '\r' after its start, and
//     the '\r' must have one more byte after it buffered before the line is
//     read.
//   * Line searches stop at a NUL byte (Redis uses strchr on its buffer): an
//     inline request or a count line with a NUL before its end never
//     completes; once more than 64 KiB is buffered it fails as too big.
//   * The "too big" limits apply to what is buffered when Next() is called
//     and no end of line is found in it, not to the length of a line: a line
//     longer than 64 KiB whose end arrives in the same read passes, as in
//     Redis, where the outcome likewise depends on how reads fall.

#ifndef EPHPM_RESP_PARSER_H_
#define EPHPM_RESP_PARSER_H_

#include <climits>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ephpm {
namespace resp {

struct ParserLimits {
  // proto-max-bulk-len: a longer bulk is "invalid bulk length".
  size_t max_bulk_len = 512ull << 20;
  // A multibulk count above this is "invalid multibulk length" (Redis 7.0
  // rejects counts above INT_MAX).
  long long max_multibulk_len = INT_MAX;
  // PROTO_INLINE_MAX_SIZE: how much may be buffered while no end of line is
  // found (inline request, "*<n>" line, "$<len>" line).
  size_t max_inline_len = 64 * 1024;
};

// Incremental parser for one client connection.
//
// Buffer contract (the one rule).  The caller owns an input buffer.  It
// appends what it reads from the socket and calls Next(buf, len, ...) with
// the buffer's unconsumed bytes, again and again, until Next returns
// kNeedMore (read more, then call again) or kError (reply and close).  After
// EVERY call, whatever the result, the first *consumed bytes of buf are gone:
// the next call must start with the byte that followed them (the caller may
// erase them or just advance an offset), followed by any newly read bytes.
// *consumed is:
//   kCommand, kEmpty: the bytes of buf that completed the request (a request
//     that arrived over several calls was partly consumed by earlier
//     kNeedMore results);
//   kNeedMore: the bytes of buf the parser has taken into its own state
//     (the count line, whole "$<len>" lines and payload bytes of a multibulk
//     request in progress; 0 for an inline request, which is kept in the
//     caller's buffer until its line is complete).  The caller need not keep
//     them, so a large bulk arriving in many reads is copied once and never
//     rescanned;
//   kError: 0.
// Between calls, bytes the parser has not consumed must not change.
//
// After kError the parser stays failed: further calls return kError with
// the same message.  Redis closes the connection after the error reply.
class RequestParser {
 public:
  enum class Result {
    kNeedMore,  // no complete request yet: read more, call again
    kCommand,   // *argv holds one request's arguments (at least one)
    kEmpty,     // a blank inline line, or "*0" / a negative count: no reply
    kError,     // *error holds the reply line, e.g. "ERR Protocol error: ..."
  };

  explicit RequestParser(ParserLimits limits = {});

  // Parses from buf[0..len) (buf may be null when len is 0).  consumed, argv
  // and error must not be null.  *argv is replaced on kCommand only, *error
  // set on kError only (the reply line without the leading '-' and the
  // trailing CRLF); *consumed is always set.
  Result Next(const char* buf, size_t len, size_t* consumed, std::vector<std::string>* argv,
              std::string* error);

  // Whether the client is authenticated (or needs no authentication).
  // Until set to false, the parser applies no authentication limits.  While
  // false, as in Redis for a client that must AUTH: a multibulk count above
  // 10 is "ERR Protocol error: unauthenticated multibulk length" and a bulk
  // length above 16384 is "ERR Protocol error: unauthenticated bulk length".
  // Takes effect from the next count or length line read.
  void set_authenticated(bool yes) { authenticated_ = yes; }
  bool authenticated() const { return authenticated_; }

  // Whether a request is part way through (a multibulk request some of whose
  // bytes were consumed, or an inline line waiting for its end).  For
  // diagnostics and tests.
  bool in_request() const { return state_ != State::kIdle && state_ != State::kFailed; }
  // CONFIG SET proto-max-bulk-len: applies from the next "$<len>" line.
  void set_max_bulk_len(size_t n) { limits_.max_bulk_len = n; }

 private:
  enum class State {
    kIdle,        // between requests
    kInline,      // an inline request whose line has no end yet
    kCount,       // a multibulk request whose "*<n>" line is not read yet
    kBulkHeader,  // expecting "$<len>" of the next argument
    kBulkBody,    // reading payload (and the two bytes after it)
    kFailed,      // a protocol error was returned
  };

  // Where a line search ended.
  enum class LineEnd { kFound, kNotYet, kNever };
  LineEnd FindLineEnd(const char* line, size_t avail, char terminator, size_t* at);
  void AppendPayload(const char* p, size_t n);

  Result ParseInline(const char* buf, size_t len, size_t* consumed, std::vector<std::string>* argv,
                     std::string* error);
  Result ParseMultibulk(const char* buf, size_t len, size_t* consumed,
                        std::vector<std::string>* argv, std::string* error);
  Result Fail(std::string message, size_t* consumed, std::string* error);
  void Reset();
  // Stores the next argument of a multibulk request in args_, reusing the
  // string an earlier request left there (no allocation once the
  // connection has sent an argument as long).
  void PutArg(const char* p, size_t n);
  void PutArg(std::string&& s);

  ParserLimits limits_;
  bool authenticated_ = true;
  State state_ = State::kIdle;
  // How far the current line search got without finding its end (nor a
  // NUL), counted from buf[0]: the next call resumes there instead of
  // rescanning.  Only meaningful while the caller's buffer starts where it
  // did (guaranteed by the buffer contract, since a search consumes nothing).
  size_t scanned_ = 0;
  // The line search hit a NUL byte: the line can never end (see above).
  bool stuck_on_nul_ = false;
  // Multibulk progress.
  long long bulks_left_ = 0;  // arguments still to read
  size_t bulk_len_ = 0;       // payload length of the current argument
  size_t bulk_taken_ = 0;     // bytes of payload + 2 taken so far
  std::string bulk_;          // the current argument's payload so far
  // The arguments being read: the first args_used_ are this request's; the
  // rest are strings of an earlier request, kept for their buffers.  A
  // whole request is swapped into the caller's vector, whose strings come
  // back here for the next one.
  std::vector<std::string> args_;
  size_t args_used_ = 0;
  std::string failure_;  // set once failed
};

// Splits an inline request line the way Redis's sdssplitargs does.  `line`
// is the request without its line ending.  Returns false on unbalanced or
// malformed quoting ("ERR Protocol error: unbalanced quotes in request").
// The line is read up to its first NUL byte, if any (there is none in a line
// the parser passes, as its search for '\n' stops at NUL).
bool SplitInlineArgs(const char* line, size_t len, std::vector<std::string>* out);

// The second argument (most commands' key) of the multibulk request that
// buf[0..len) starts with, and that request's length in bytes, read without
// parsing it: false unless buf starts with a whole request of 2 to 64
// arguments in canonical form ("*N\r\n", then each "$L\r\n" and L bytes and
// "\r\n").  A hint for the requests queued behind the one being run
// (Store::Prefetch); each is still parsed by RequestParser in its turn.
bool PeekKey(const char* buf, size_t len, std::string_view* key, size_t* request_len);

// Redis's string2ll: an optional '-', then digits without leading zeros
// ("0" alone is fine; "-0", "+1", " 1" and "" are not), within long long.
bool ParseStrictInt64(const char* s, size_t len, long long* out);

}  // namespace resp
}  // namespace ephpm

#endif  // EPHPM_RESP_PARSER_H_
