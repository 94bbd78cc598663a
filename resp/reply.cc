#include "resp/reply.h"

#include <cstring>

namespace ephpm {
namespace resp {

char* FormatInt64(int64_t v, char (&buf)[20]) {
  // INT64_MIN has 19 digits plus the sign: exactly 20 bytes.
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  char* p = buf + sizeof(buf);
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (v < 0) *--p = '-';
  return p;
}

void ReplyWriter::Header(char prefix, int64_t v) {
  // prefix, up to 20 characters, CRLF.
  char digits[20];
  const char* start = FormatInt64(v, digits);
  const size_t n = static_cast<size_t>(digits + sizeof(digits) - start);
  const size_t old = out_->size();
  out_->resize(old + n + 3);
  char* p = &(*out_)[old];
  *p++ = prefix;
  std::memcpy(p, start, n);
  p += n;
  *p++ = '\r';
  *p = '\n';
}

void ReplyWriter::Bulk(std::string_view s) {
  Header('$', static_cast<int64_t>(s.size()));
  out_->reserve(out_->size() + s.size() + 2);
  out_->append(s.data(), s.size());
  out_->append("\r\n", 2);
}

void ReplyWriter::Line(char prefix, std::string_view s) {
  const size_t old = out_->size();
  out_->reserve(old + s.size() + 3);
  out_->push_back(prefix);
  out_->append(s.data(), s.size());
  // Keep the line one line.
  for (size_t i = old + 1; i < out_->size(); ++i) {
    char& c = (*out_)[i];
    if (c == '\r' || c == '\n') c = ' ';
  }
  out_->append("\r\n", 2);
}

}  // namespace resp
}  // namespace ephpm
