#include "resp/parser.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace ephpm {
namespace resp {

namespace {

constexpr char kTooBigInline[] = "ERR Protocol error: too big inline request";
constexpr char kUnbalancedQuotes[] = "ERR Protocol error: unbalanced quotes in request";
constexpr char kTooBigCount[] = "ERR Protocol error: too big mbulk count string";
constexpr char kInvalidCount[] = "ERR Protocol error: invalid multibulk length";
constexpr char kUnauthCount[] = "ERR Protocol error: unauthenticated multibulk length";
constexpr char kTooBigBulkCount[] = "ERR Protocol error: too big bulk count string";
constexpr char kInvalidBulkLen[] = "ERR Protocol error: invalid bulk length";
constexpr char kUnauthBulkLen[] = "ERR Protocol error: unauthenticated bulk length";

// Limits Redis applies to a client that must authenticate and has not.
constexpr long long kUnauthMaxCount = 10;
constexpr long long kUnauthMaxBulkLen = 16384;

// Initial argv capacity for a multibulk request: the count is the client's
// claim, so do not trust it with more than this up front.
constexpr long long kArgvInitialCap = 1024;

// An argument string handed back by the caller is kept for reuse up to this
// capacity; a larger one is freed.
constexpr size_t kArgKeepCap = 16 * 1024;

// isspace() in the C locale (bytes >= 0x80 are not spaces).
inline bool IsCSpace(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

inline int HexValue(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool ParseStrictInt64(const char* s, size_t len, long long* out) {
  if (len == 0) return false;
  size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative) {
    i = 1;
    if (len == 1) return false;
  }
  if (s[i] == '0') {
    // Only "0" itself; "-0" and leading zeros are rejected.
    if (len == 1) {
      *out = 0;
      return true;
    }
    return false;
  }
  unsigned long long v = 0;
  for (; i < len; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < '0' || c > '9') return false;
    const unsigned long long d = c - '0';
    if (v > (~0ull - d) / 10) return false;
    v = v * 10 + d;
  }
  const unsigned long long limit = negative ? (1ull << 63) : (1ull << 63) - 1;
  if (v > limit) return false;
  *out = negative ? static_cast<long long>(0 - v) : static_cast<long long>(v);
  return true;
}

bool SplitInlineArgs(const char* line, size_t len, std::vector<std::string>* out) {
  out->clear();
  if (const void* nul = std::memchr(line, '\0', len)) {
    len = static_cast<size_t>(static_cast<const char*>(nul) - line);
  }
  // The byte at i, or 0 past the end (the line reads as NUL-terminated).
  auto at = [line, len](size_t i) -> unsigned char {
    return i < len ? static_cast<unsigned char>(line[i]) : 0;
  };

  size_t i = 0;
  for (;;) {
    while (i < len && IsCSpace(at(i))) ++i;
    if (i >= len) return true;

    std::string word;
    enum class Mode { kBare, kDouble, kSingle } mode = Mode::kBare;
    bool done = false;
    while (!done) {
      const unsigned char c = at(i);
      switch (mode) {
        case Mode::kDouble:
          if (c == '\\' && at(i + 1) == 'x' && HexValue(at(i + 2)) >= 0 &&
              HexValue(at(i + 3)) >= 0) {
            word.push_back(static_cast<char>(HexValue(at(i + 2)) * 16 + HexValue(at(i + 3))));
            i += 3;  // now on the last hex digit
          } else if (c == '\\' && at(i + 1) != 0) {
            ++i;  // now on the escaped byte
            char e;
            switch (at(i)) {
              case 'n':
                e = '\n';
                break;
              case 'r':
                e = '\r';
                break;
              case 't':
                e = '\t';
                break;
              case 'b':
                e = '\b';
                break;
              case 'a':
                e = '\a';
                break;
              default:
                e = static_cast<char>(at(i));
                break;
            }
            word.push_back(e);
          } else if (c == '"') {
            // A closing quote must be followed by a space or the end.
            if (at(i + 1) != 0 && !IsCSpace(at(i + 1))) return false;
            done = true;
          } else if (c == 0) {
            return false;  // unterminated
          } else {
            word.push_back(static_cast<char>(c));
          }
          break;
        case Mode::kSingle:
          if (c == '\\' && at(i + 1) == '\'') {
            ++i;
            word.push_back('\'');
          } else if (c == '\'') {
            if (at(i + 1) != 0 && !IsCSpace(at(i + 1))) return false;
            done = true;
          } else if (c == 0) {
            return false;
          } else {
            word.push_back(static_cast<char>(c));
          }
          break;
        case Mode::kBare:
          // Only these end a bare word; a quote anywhere in it opens a
          // quoted part ("a"b" -> ab..., as in sdssplitargs).
          if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == 0) {
            done = true;
          } else if (c == '"') {
            mode = Mode::kDouble;
          } else if (c == '\'') {
            mode = Mode::kSingle;
          } else {
            word.push_back(static_cast<char>(c));
          }
          break;
      }
      if (at(i) != 0) ++i;
    }
    out->push_back(std::move(word));
  }
}

RequestParser::RequestParser(ParserLimits limits) : limits_(limits) {}

void RequestParser::Reset() {
  state_ = State::kIdle;
  scanned_ = 0;
  stuck_on_nul_ = false;
  bulks_left_ = 0;
  bulk_len_ = 0;
  bulk_taken_ = 0;
  bulk_.clear();
  args_used_ = 0;
}

void RequestParser::PutArg(const char* p, size_t n) {
  if (args_used_ < args_.size()) {
    args_[args_used_].assign(p, n);
  } else {
    args_.emplace_back(p, n);
  }
  ++args_used_;
}

void RequestParser::PutArg(std::string&& s) {
  if (args_used_ < args_.size()) {
    args_[args_used_] = std::move(s);
  } else {
    args_.push_back(std::move(s));
  }
  ++args_used_;
}

RequestParser::Result RequestParser::Fail(std::string message, size_t* consumed,
                                          std::string* error) {
  Reset();
  state_ = State::kFailed;
  failure_ = std::move(message);
  *error = failure_;
  *consumed = 0;
  return Result::kError;
}

RequestParser::LineEnd RequestParser::FindLineEnd(const char* line, size_t avail, char terminator,
                                                  size_t* at) {
  if (stuck_on_nul_) return LineEnd::kNever;
  if (scanned_ > avail) scanned_ = 0;  // defensive: the caller broke the contract
  const char* from = line + scanned_;
  const size_t n = avail - scanned_;
  const void* hit = std::memchr(from, terminator, n);
  const size_t upto = hit ? static_cast<size_t>(static_cast<const char*>(hit) - from) : n;
  // Redis searches with strchr: a NUL before the terminator ends the search.
  if (std::memchr(from, '\0', upto) != nullptr) {
    stuck_on_nul_ = true;
    return LineEnd::kNever;
  }
  if (hit == nullptr) {
    scanned_ = avail;
    return LineEnd::kNotYet;
  }
  scanned_ += upto;  // stay on the terminator: a later call finds it at once
  *at = scanned_;
  return LineEnd::kFound;
}

void RequestParser::AppendPayload(const char* p, size_t n) {
  // Grow geometrically but never beyond the declared length, and never on
  // the declared length alone: memory follows the bytes that arrived.
  const size_t want = bulk_.size() + n;
  if (want > bulk_.capacity()) {
    size_t cap = std::max(want, bulk_.capacity() * 2);
    cap = std::min(cap, bulk_len_);
    bulk_.reserve(std::max(cap, want));
  }
  bulk_.append(p, n);
}

RequestParser::Result RequestParser::Next(const char* buf, size_t len, size_t* consumed,
                                          std::vector<std::string>* argv, std::string* error) {
  *consumed = 0;
  switch (state_) {
    case State::kFailed:
      *error = failure_;
      return Result::kError;
    case State::kIdle:
      if (len == 0) return Result::kNeedMore;
      state_ = buf[0] == '*' ? State::kCount : State::kInline;
      break;
    default:
      if (len == 0) return Result::kNeedMore;
      break;
  }
  if (state_ == State::kInline) return ParseInline(buf, len, consumed, argv, error);
  return ParseMultibulk(buf, len, consumed, argv, error);
}

RequestParser::Result RequestParser::ParseInline(const char* buf, size_t len, size_t* consumed,
                                                 std::vector<std::string>* argv,
                                                 std::string* error) {
  size_t nl = 0;
  if (FindLineEnd(buf, len, '\n', &nl) != LineEnd::kFound) {
    if (len > limits_.max_inline_len) return Fail(kTooBigInline, consumed, error);
    return Result::kNeedMore;
  }
  size_t line_len = nl;
  if (line_len > 0 && buf[line_len - 1] == '\r') --line_len;
  std::vector<std::string> words;
  if (!SplitInlineArgs(buf, line_len, &words)) return Fail(kUnbalancedQuotes, consumed, error);
  Reset();
  *consumed = nl + 1;
  if (words.empty()) return Result::kEmpty;
  *argv = std::move(words);
  return Result::kCommand;
}

RequestParser::Result RequestParser::ParseMultibulk(const char* buf, size_t len, size_t* consumed,
                                                    std::vector<std::string>* argv,
                                                    std::string* error) {
  size_t pos = 0;
  if (state_ == State::kCount) {
    size_t cr = 0;
    if (FindLineEnd(buf, len, '\r', &cr) != LineEnd::kFound) {
      if (len > limits_.max_inline_len) return Fail(kTooBigCount, consumed, error);
      return Result::kNeedMore;
    }
    // The byte after '\r' must be buffered; it is skipped unchecked.
    if (cr + 1 >= len) return Result::kNeedMore;
    long long count = 0;
    if (!ParseStrictInt64(buf + 1, cr - 1, &count) || count > limits_.max_multibulk_len) {
      return Fail(kInvalidCount, consumed, error);
    }
    if (count > kUnauthMaxCount && !authenticated_) return Fail(kUnauthCount, consumed, error);
    pos = cr + 2;
    if (count <= 0) {
      Reset();
      *consumed = pos;
      return Result::kEmpty;
    }
    bulks_left_ = count;
    args_.reserve(static_cast<size_t>(std::min(count, kArgvInitialCap)));
    scanned_ = 0;
    state_ = State::kBulkHeader;
  }

  while (bulks_left_ > 0) {
    if (state_ == State::kBulkHeader) {
      const char* line = buf + pos;
      const size_t avail = len - pos;
      size_t cr = 0;
      if (FindLineEnd(line, avail, '\r', &cr) != LineEnd::kFound) {
        if (avail > limits_.max_inline_len) return Fail(kTooBigBulkCount, consumed, error);
        break;
      }
      if (cr + 1 >= avail) break;
      if (line[0] != '$') {
        char got = line[0];
        if (got == '\r' || got == '\n') got = ' ';  // Redis maps CR/LF in errors to spaces
        std::string message = "ERR Protocol error: expected '$', got '";
        message.push_back(got);
        message.push_back('\'');
        return Fail(std::move(message), consumed, error);
      }
      long long n = 0;
      if (!ParseStrictInt64(line + 1, cr - 1, &n) || n < 0 ||
          static_cast<unsigned long long>(n) > limits_.max_bulk_len) {
        return Fail(kInvalidBulkLen, consumed, error);
      }
      if (n > kUnauthMaxBulkLen && !authenticated_) return Fail(kUnauthBulkLen, consumed, error);
      pos += cr + 2;
      scanned_ = 0;
      bulk_len_ = static_cast<size_t>(n);
      bulk_taken_ = 0;
      state_ = State::kBulkBody;
    }

    // The payload and the two bytes after it (skipped, not checked).
    const size_t avail = len - pos;
    const size_t need = bulk_len_ + 2 - bulk_taken_;
    if (bulk_taken_ == 0 && avail >= need) {
      // The common case: the whole argument is here; copy it once.
      PutArg(buf + pos, bulk_len_);
      pos += need;
    } else {
      const size_t take = std::min(need, avail);
      if (bulk_taken_ < bulk_len_) {
        AppendPayload(buf + pos, std::min(take, bulk_len_ - bulk_taken_));
      }
      bulk_taken_ += take;
      pos += take;
      if (bulk_taken_ < bulk_len_ + 2) break;
      PutArg(std::move(bulk_));
      bulk_ = std::string();
    }
    bulk_taken_ = 0;
    --bulks_left_;
    state_ = State::kBulkHeader;
  }

  *consumed = pos;
  if (bulks_left_ > 0) return Result::kNeedMore;
  args_.resize(args_used_);
  argv->swap(args_);
  // The caller's strings stay for the next request, but not a large buffer
  // (a connection that once sent a big value would hold it for good).
  for (std::string& s : args_) {
    if (s.capacity() > kArgKeepCap) std::string().swap(s);
  }
  Reset();
  return Result::kCommand;
}

namespace {

// The count or length on the line at buf[*at..len), read as the parser
// reads one (ParseStrictInt64 up to the CR), and *at past its CRLF; false
// for anything else or a number past 999 999 999.
bool PeekNumberLine(const char* buf, size_t len, size_t* at, size_t* n) {
  constexpr long long kMaxPeekNumber = 999'999'999;
  const char* line = buf + *at;
  const void* cr = std::memchr(line, '\r', std::min<size_t>(len - *at, 11));
  if (cr == nullptr) return false;
  const size_t digits = static_cast<size_t>(static_cast<const char*>(cr) - line);
  long long v = 0;
  if (*at + digits + 1 >= len || line[digits + 1] != '\n' ||
      !ParseStrictInt64(line, digits, &v) || v < 0 || v > kMaxPeekNumber) {
    return false;
  }
  *at += digits + 2;
  *n = static_cast<size_t>(v);
  return true;
}

}  // namespace

bool PeekKey(const char* buf, size_t len, std::string_view* key, size_t* request_len) {
  constexpr size_t kMaxPeekArgs = 64;  // past this, skipping costs more than it may save
  size_t at = 1;
  size_t argc = 0;
  if (len == 0 || buf[0] != '*' || !PeekNumberLine(buf, len, &at, &argc) || argc < 2 ||
      argc > kMaxPeekArgs) {
    return false;
  }
  for (size_t i = 0; i < argc; ++i) {
    size_t n = 0;
    if (at >= len || buf[at] != '$') return false;
    ++at;
    if (!PeekNumberLine(buf, len, &at, &n) || len - at < n + 2 || buf[at + n] != '\r' ||
        buf[at + n + 1] != '\n') {
      return false;
    }
    if (i == 1) *key = std::string_view(buf + at, n);
    at += n + 2;
  }
  *request_len = at;
  return true;
}

}  // namespace resp
}  // namespace ephpm
