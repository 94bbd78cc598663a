// RESP2 reply encoding, appended to a caller's std::string.  No
// dependencies beyond the standard library.
//
//   std::string out;
//   ephpm::resp::ReplyWriter w(&out);
//   w.ArrayHeader(2);
//   w.Bulk("a");
//   w.NullBulk();          // out == "*2\r\n$1\r\na\r\n$-1\r\n"

#ifndef EPHPM_RESP_REPLY_H_
#define EPHPM_RESP_REPLY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ephpm {
namespace resp {

class ReplyWriter {
 public:
  // Appends to *out, which must outlive the writer.
  explicit ReplyWriter(std::string* out) : out_(out) {}

  // "+<s>\r\n".  A CR or LF in s would end the line early and desynchronise
  // the client, so each becomes a space (as Redis does for formatted errors).
  void SimpleString(std::string_view s) { Line('+', s); }

  // "-<line>\r\n", line without the '-', e.g. "ERR syntax error" or
  // "WRONGTYPE Operation against a key holding the wrong kind of value".
  // CR and LF become spaces, as in Redis's addReplyErrorFormat.
  void Error(std::string_view line) { Line('-', line); }

  // ":<v>\r\n".
  void Integer(int64_t v) { Header(':', v); }

  // "$<len>\r\n<s>\r\n", binary-safe.
  void Bulk(std::string_view s);

  // "$-1\r\n", RESP2's null bulk string.
  void NullBulk() { out_->append("$-1\r\n", 5); }

  // A bulk string, or the null one for nullopt (HMGET's missing fields,
  // SORT's missing GET keys).
  void BulkOrNull(const std::optional<std::string>& s) {
    if (s) {
      Bulk(*s);
    } else {
      NullBulk();
    }
  }

  // "*<n>\r\n"; n elements must follow.
  void ArrayHeader(size_t n) { Header('*', static_cast<int64_t>(n)); }

  // "*-1\r\n", RESP2's null array.
  void NullArray() { out_->append("*-1\r\n", 5); }

  // Bytes already in RESP form, appended as they are.
  void Raw(std::string_view bytes) { out_->append(bytes.data(), bytes.size()); }

  std::string* out() const { return out_; }

 private:
  void Line(char prefix, std::string_view s);
  void Header(char prefix, int64_t v);

  std::string* out_;
};

// Writes the decimal form of v to the end of buf[0..20) and returns where it
// starts; the digits run to buf + 20.  For callers that format lengths or
// integers without the writer.
char* FormatInt64(int64_t v, char (&buf)[20]);

}  // namespace resp
}  // namespace ephpm

#endif  // EPHPM_RESP_REPLY_H_
