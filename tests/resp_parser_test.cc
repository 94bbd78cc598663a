// The RESP request parser against Redis 7.0's behaviour: commands, empty
// requests and the exact protocol error lines, whatever way the bytes are
// split into reads.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "resp/parser.h"

namespace {

using ephpm::resp::ParserLimits;
using ephpm::resp::RequestParser;
using Result = RequestParser::Result;
using Args = std::vector<std::string>;

// One outcome of Next(), other than kNeedMore.
struct Event {
  Result result;
  Args argv;          // kCommand
  std::string error;  // kError

  bool operator==(const Event& o) const {
    return result == o.result && argv == o.argv && error == o.error;
  }
};

std::ostream& operator<<(std::ostream& os, const Event& e) {
  switch (e.result) {
    case Result::kCommand: {
      os << "Command{";
      for (const std::string& a : e.argv) os << '"' << a << "\" ";
      return os << '}';
    }
    case Result::kEmpty:
      return os << "Empty";
    case Result::kError:
      return os << "Error{" << e.error << '}';
    case Result::kNeedMore:
      return os << "NeedMore";
  }
  return os;
}

Event Cmd(Args argv) { return Event{Result::kCommand, std::move(argv), {}}; }
Event Empty() { return Event{Result::kEmpty, {}, {}}; }
Event Err(std::string error) { return Event{Result::kError, {}, std::move(error)}; }

// A client connection's input side: a buffer the test appends reads to, and
// a parser fed the way the server will feed it (erase what was consumed
// after every call).
struct Connection {
  explicit Connection(ParserLimits limits = {}) : parser(limits) {}

  // Appends one read and collects every outcome until the parser needs
  // more input or fails.
  std::vector<Event> Read(const std::string& bytes) {
    buffer += bytes;
    std::vector<Event> events;
    for (;;) {
      size_t consumed = 12345;
      Args argv;
      std::string error;
      const Result r = parser.Next(buffer.data(), buffer.size(), &consumed, &argv, &error);
      REQUIRE(consumed <= buffer.size());
      buffer.erase(0, consumed);
      if (r == Result::kNeedMore) return events;
      if (r == Result::kError) REQUIRE(consumed == 0);
      events.push_back(Event{r, std::move(argv), std::move(error)});
      if (r == Result::kError) return events;
    }
  }

  RequestParser parser;
  std::string buffer;
};

std::vector<Event> ParseWhole(const std::string& input, ParserLimits limits = {}) {
  Connection c(limits);
  return c.Read(input);
}

std::vector<Event> ParseInReads(const std::vector<std::string>& reads, ParserLimits limits = {}) {
  Connection c(limits);
  std::vector<Event> all;
  for (const std::string& r : reads) {
    std::vector<Event> got = c.Read(r);
    all.insert(all.end(), got.begin(), got.end());
    if (!all.empty() && all.back().result == Result::kError) break;
  }
  return all;
}

std::vector<Event> ParseBytewise(const std::string& input, ParserLimits limits = {}) {
  std::vector<std::string> reads;
  for (char ch : input) reads.emplace_back(1, ch);
  return ParseInReads(reads, limits);
}

// The error line the input ends in, checking nothing came before it and
// that the parser returns it again on the next call.
std::string ErrorOf(const std::string& input, bool authenticated = true, ParserLimits limits = {}) {
  Connection c(limits);
  c.parser.set_authenticated(authenticated);
  std::vector<Event> events = c.Read(input);
  REQUIRE(events.size() == 1);
  REQUIRE(events[0].result == Result::kError);
  // Sticky: the connection is to be closed, the parser stays failed.
  std::vector<Event> again = c.Read("PING\r\n");
  REQUIRE(again.size() == 1);
  CHECK(again[0] == events[0]);
  return events[0].error;
}

std::string Multibulk(const Args& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

const std::string kInvalidMbulk = "ERR Protocol error: invalid multibulk length";
const std::string kInvalidBulk = "ERR Protocol error: invalid bulk length";
const std::string kUnbalanced = "ERR Protocol error: unbalanced quotes in request";

}  // namespace

// ---------------------------------------------------------------- commands

TEST_CASE("a multibulk request gives its arguments and consumes exactly its bytes", "[resp]") {
  RequestParser p;
  const std::string in = "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n*1\r\n$4\r\nPING\r\n";
  size_t consumed = 0;
  Args argv;
  std::string error;
  REQUIRE(p.Next(in.data(), in.size(), &consumed, &argv, &error) == Result::kCommand);
  CHECK(argv == Args{"GET", "key"});
  CHECK(consumed == 22);
  CHECK_FALSE(p.in_request());
}

TEST_CASE("an inline request splits on spaces and tabs", "[resp]") {
  CHECK(ParseWhole("SET  key\tvalue\r\n") == std::vector<Event>{Cmd({"SET", "key", "value"})});
  CHECK(ParseWhole("PING\n") == std::vector<Event>{Cmd({"PING"})});
  CHECK(ParseWhole("  PING  \r\n") == std::vector<Event>{Cmd({"PING"})});
}

TEST_CASE("an incomplete request waits, consuming only whole multibulk parts", "[resp]") {
  RequestParser p;
  size_t consumed = 99;
  Args argv;
  std::string error;
  const std::string part = "*2\r\n$3\r\nfoo\r\n$3\r\nba";
  REQUIRE(p.Next(part.data(), part.size(), &consumed, &argv, &error) == Result::kNeedMore);
  // "*2\r\n", "$3\r\nfoo\r\n" and "$3\r\n" and the two payload bytes "ba".
  CHECK(consumed == part.size());
  CHECK(p.in_request());
  const std::string rest = "r\r\n";
  REQUIRE(p.Next(rest.data(), rest.size(), &consumed, &argv, &error) == Result::kCommand);
  CHECK(consumed == 3);
  CHECK(argv == Args{"foo", "bar"});

  // An inline request is kept in the caller's buffer until its line ends.
  const std::string inl = "GET ke";
  REQUIRE(p.Next(inl.data(), inl.size(), &consumed, &argv, &error) == Result::kNeedMore);
  CHECK(consumed == 0);
  const std::string inl2 = "GET key\r\n";
  REQUIRE(p.Next(inl2.data(), inl2.size(), &consumed, &argv, &error) == Result::kCommand);
  CHECK(consumed == inl2.size());
  CHECK(argv == Args{"GET", "key"});
}

TEST_CASE("a count or length line waits for the byte after its CR", "[resp]") {
  RequestParser p;
  size_t consumed = 0;
  Args argv;
  std::string error;
  std::string in = "*1\r";
  CHECK(p.Next(in.data(), in.size(), &consumed, &argv, &error) == Result::kNeedMore);
  CHECK(consumed == 0);
  in = "*1\r\n$1\r";
  CHECK(p.Next(in.data(), in.size(), &consumed, &argv, &error) == Result::kNeedMore);
  CHECK(consumed == 4);
  in = "$1\r\nx";
  CHECK(p.Next(in.data(), in.size(), &consumed, &argv, &error) == Result::kNeedMore);
  in = "\r";
  CHECK(p.Next(in.data(), in.size(), &consumed, &argv, &error) == Result::kNeedMore);
  in = "\n";
  CHECK(p.Next(in.data(), in.size(), &consumed, &argv, &error) == Result::kCommand);
  CHECK(argv == Args{"x"});
}

// ---------------------------------------------------------- Redis's quirks

TEST_CASE("the two bytes after a bulk payload are skipped unchecked, as in Redis", "[resp]") {
  CHECK(ParseWhole("*2\r\n$1\r\naXY$1\r\nbZZ") == std::vector<Event>{Cmd({"a", "b"})});
  // A payload longer than declared: the extra bytes start the next request.
  CHECK(ParseWhole("*1\r\n$3\r\nfoobar\r\n") == (std::vector<Event>{Cmd({"foo"}), Cmd({"r"})}));
}

TEST_CASE("the byte after the CR of a count or length line is skipped unchecked", "[resp]") {
  CHECK(ParseWhole("*1\rX$3\rYfoo\r\n") == std::vector<Event>{Cmd({"foo"})});
}

TEST_CASE("a length line ends at the first CR, so a bare LF makes it invalid", "[resp]") {
  CHECK(ErrorOf("*1\n$3\r\nfoo\r\n") == kInvalidMbulk);
  CHECK(ErrorOf("*1\r\n$3\nfoo\r\n") == kInvalidBulk);
}

TEST_CASE("an inline line longer than 64 KiB passes when its end is already buffered", "[resp]") {
  const std::string word(70 * 1024, 'a');
  CHECK(ParseWhole("SET k " + word + "\r\n") == std::vector<Event>{Cmd({"SET", "k", word})});
}

TEST_CASE("a NUL byte stops the line search, as Redis's strchr does", "[resp]") {
  // The request never completes...
  CHECK(ParseWhole(std::string("PING\0\r\n", 7)).empty());
  CHECK(ParseWhole(std::string("*1\0\r\n$4\r\nPING\r\n", 15)).empty());
  CHECK(ParseWhole(std::string("*1\r\n$4\0\r\nPING\r\n", 15)).empty());
  // ...until more than 64 KiB is buffered, then it is too big.
  const std::string pad(64 * 1024, 'x');
  CHECK(ParseWhole(std::string("PING\0\r\n", 7) + pad) ==
        std::vector<Event>{Err("ERR Protocol error: too big inline request")});
  CHECK(ParseWhole(std::string("*1\0\r\n", 5) + pad) ==
        std::vector<Event>{Err("ERR Protocol error: too big mbulk count string")});
  CHECK(ParseWhole(std::string("*1\r\n$4\0\r\n", 9) + pad) ==
        std::vector<Event>{Err("ERR Protocol error: too big bulk count string")});
  // A NUL inside a bulk payload is just a byte.
  CHECK(ParseWhole(std::string("*1\r\n$1\r\n\0\r\n", 11)) ==
        std::vector<Event>{Cmd({std::string(1, '\0')})});
}

// ------------------------------------------------------------ empty requests

TEST_CASE("blank lines and non-positive counts are empty requests with no reply", "[resp]") {
  CHECK(ParseWhole("\r\n") == std::vector<Event>{Empty()});
  CHECK(ParseWhole("\n") == std::vector<Event>{Empty()});
  CHECK(ParseWhole("   \t \r\n") == std::vector<Event>{Empty()});
  CHECK(ParseWhole("\r\r\n") == std::vector<Event>{Empty()});
  CHECK(ParseWhole("\v\f\r\n") == std::vector<Event>{Empty()});
  CHECK(ParseWhole("*0\r\n") == std::vector<Event>{Empty()});
  CHECK(ParseWhole("*-1\r\n") == std::vector<Event>{Empty()});
  CHECK(ParseWhole("*-10\r\n") == std::vector<Event>{Empty()});
  CHECK(ParseWhole("*-9223372036854775808\r\n") == std::vector<Event>{Empty()});
  CHECK(ParseWhole("\r\n*0\r\nPING\r\n") == (std::vector<Event>{Empty(), Empty(), Cmd({"PING"})}));
}

TEST_CASE("an empty empty-quoted word is a command, not an empty request", "[resp]") {
  CHECK(ParseWhole("\"\"\r\n") == std::vector<Event>{Cmd({""})});
  CHECK(ParseWhole("''\r\n") == std::vector<Event>{Cmd({""})});
  CHECK(ParseWhole("*1\r\n$0\r\n\r\n") == std::vector<Event>{Cmd({""})});
}

// -------------------------------------------------- malformed frames (exact)

TEST_CASE("malformed multibulk counts are 'invalid multibulk length'", "[resp]") {
  for (const char* in :
       {"*abc\r\n", "*+1\r\n", "* 1\r\n", "*1 \r\n", "*01\r\n", "*\r\n", "*-\r\n", "*-0\r\n",
        "*1x\r\n", "*0x1\r\n", "*2147483648\r\n", "*9223372036854775807\r\n",
        "*9223372036854775808\r\n", "*-9223372036854775809\r\n", "*1.5\r\n"}) {
    INFO(in);
    CHECK(ErrorOf(in) == kInvalidMbulk);
  }
  // INT_MAX itself is accepted and waits for its bulks.
  CHECK(ParseWhole("*2147483647\r\n").empty());
}

TEST_CASE("a bulk that does not start with '$' names the byte it got", "[resp]") {
  CHECK(ErrorOf("*1\r\nfoo\r\n") == "ERR Protocol error: expected '$', got 'f'");
  CHECK(ErrorOf("*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n") ==
        "ERR Protocol error: expected '$', got 'f'");
  CHECK(ErrorOf("*1\r\n:1\r\n") == "ERR Protocol error: expected '$', got ':'");
  CHECK(ErrorOf("*1\r\n*1\r\n") == "ERR Protocol error: expected '$', got '*'");
  CHECK(ErrorOf("*1\r\n \r\n") == "ERR Protocol error: expected '$', got ' '");
  CHECK(ErrorOf("*1\r\n\xff\r\n") == "ERR Protocol error: expected '$', got '\xff'");
  // CR and LF are shown as spaces, as Redis maps them in error replies.
  CHECK(ErrorOf("*1\r\n\r\n\r\n") == "ERR Protocol error: expected '$', got ' '");
  CHECK(ErrorOf("*1\r\n\nx\r\n") == "ERR Protocol error: expected '$', got ' '");
  // After a payload longer than declared, the leftover is read as a header.
  CHECK(ErrorOf("*2\r\n$1\r\nabc\r\n$1\r\nx\r\n") == "ERR Protocol error: expected '$', got ' '");
}

TEST_CASE("malformed bulk lengths are 'invalid bulk length'", "[resp]") {
  for (const char* in : {"*1\r\n$abc\r\n", "*1\r\n$-1\r\n", "*1\r\n$-0\r\n", "*1\r\n$+1\r\n",
                         "*1\r\n$01\r\n", "*1\r\n$\r\n", "*1\r\n$ 1\r\n", "*1\r\n$1 \r\n",
                         "*1\r\n$536870913\r\n", "*1\r\n$99999999999999999999\r\n",
                         "*1\r\n$9223372036854775807\r\n", "*2\r\n$1\r\na\r\n$x\r\n"}) {
    INFO(in);
    CHECK(ErrorOf(in) == kInvalidBulk);
  }
  // proto-max-bulk-len itself is accepted and waits for its payload.
  CHECK(ParseWhole("*1\r\n$536870912\r\n").empty());
}

TEST_CASE("the configured limits decide what is too long", "[resp]") {
  ParserLimits limits;
  limits.max_bulk_len = 10;
  limits.max_multibulk_len = 5;
  CHECK(ErrorOf("*1\r\n$11\r\n", true, limits) == kInvalidBulk);
  CHECK(ErrorOf("*6\r\n", true, limits) == kInvalidMbulk);
  CHECK(ParseWhole("*5\r\n$10\r\n0123456789\r\n", limits).empty());
}

TEST_CASE("more than 64 KiB buffered without a line end is 'too big'", "[resp]") {
  const size_t max = 64 * 1024;
  // Exactly the limit still waits.
  CHECK(ParseWhole(std::string(max, 'a')).empty());
  CHECK(ErrorOf(std::string(max + 1, 'a')) == "ERR Protocol error: too big inline request");
  CHECK(ParseWhole("*" + std::string(max - 1, '1')).empty());
  CHECK(ErrorOf("*" + std::string(max, '1')) == "ERR Protocol error: too big mbulk count string");
  CHECK(ErrorOf("*1\r\n$" + std::string(max, '1')) ==
        "ERR Protocol error: too big bulk count string");
  // The limit counts what is buffered from the line's start, pipelined
  // bytes after a NUL included.
  CHECK(ErrorOf(std::string("*1\r\n$1\0", 7) + std::string(max, '\n')) ==
        "ERR Protocol error: too big bulk count string");
}

TEST_CASE("a smaller inline limit applies to all three line kinds", "[resp]") {
  ParserLimits limits;
  limits.max_inline_len = 8;
  CHECK(ErrorOf("GET abcde", true, limits) == "ERR Protocol error: too big inline request");
  CHECK(ErrorOf("*1234567 ", true, limits) == "ERR Protocol error: too big mbulk count string");
  CHECK(ErrorOf("*1\r\n$1234567 ", true, limits) ==
        "ERR Protocol error: too big bulk count string");
  // Bytes of earlier bulks do not count: only the line being searched.
  CHECK(ParseWhole("*2\r\n$3\r\nabc\r\n$1\r\nx\r\n", limits) ==
        std::vector<Event>{Cmd({"abc", "x"})});
}

TEST_CASE("unbalanced or misplaced quotes in an inline request are an error", "[resp]") {
  for (const char* in : {"SET \"a\r\n", "SET 'a\r\n", "SET \"a\"b\r\n", "SET 'a'b\r\n",
                         "GET \"a\\\"\r\n", "GET \"abc\\\r\n", "GET \"a\"\"b\"\r\n", "x\"y\"z\r\n",
                         "\"\r\n", "'\r\n", "GET 'it\\'\r\n", "\"a\"'b'\r\n"}) {
    INFO(in);
    CHECK(ErrorOf(in) == kUnbalanced);
  }
}

TEST_CASE("commands before a protocol error are returned first", "[resp]") {
  CHECK(ParseWhole("PING\r\n*1\r\n$1\r\na\r\n*x\r\nPING\r\n") ==
        (std::vector<Event>{Cmd({"PING"}), Cmd({"a"}), Err(kInvalidMbulk)}));
}

// ------------------------------------------------------- unauthenticated

TEST_CASE("an unauthenticated client may send at most 10 arguments of 16 KiB", "[resp]") {
  CHECK(ErrorOf("*11\r\n", false) == "ERR Protocol error: unauthenticated multibulk length");
  CHECK(ErrorOf("*100\r\n", false) == "ERR Protocol error: unauthenticated multibulk length");
  CHECK(ErrorOf("*1\r\n$16385\r\n", false) == "ERR Protocol error: unauthenticated bulk length");
  CHECK(ErrorOf("*1\r\n$100000000\r\n", false) ==
        "ERR Protocol error: unauthenticated bulk length");
  // The validity checks come first.
  CHECK(ErrorOf("*2147483648\r\n", false) == kInvalidMbulk);
  CHECK(ErrorOf("*1\r\n$-5\r\n", false) == kInvalidBulk);
  CHECK(ErrorOf("*1\r\n$536870913\r\n", false) == kInvalidBulk);

  // At the limits it is fine; inline requests have no such limit.
  Connection c;
  c.parser.set_authenticated(false);
  const Args ten(10, std::string(16384, 'v'));
  CHECK(c.Read(Multibulk(ten)) == std::vector<Event>{Cmd(ten)});
  const std::string long_inline = "ECHO " + std::string(20000, 'w') + "\r\n";
  CHECK(c.Read(long_inline) == std::vector<Event>{Cmd({"ECHO", std::string(20000, 'w')})});
}

TEST_CASE("authenticating lifts the limits from the next request on", "[resp]") {
  Connection c;
  c.parser.set_authenticated(false);
  const Args big(11, "x");
  std::string pipeline = Multibulk({"AUTH", "pw"}) + Multibulk(big);
  c.buffer = pipeline;
  size_t consumed = 0;
  Args argv;
  std::string error;
  REQUIRE(c.parser.Next(c.buffer.data(), c.buffer.size(), &consumed, &argv, &error) ==
          Result::kCommand);
  CHECK(argv == Args{"AUTH", "pw"});
  c.buffer.erase(0, consumed);
  c.parser.set_authenticated(true);  // the server ran AUTH
  CHECK(c.Read("") == std::vector<Event>{Cmd(big)});

  // And the other way round: a connection that must AUTH again.
  c.parser.set_authenticated(false);
  CHECK(c.Read(Multibulk(big)) ==
        std::vector<Event>{Err("ERR Protocol error: unauthenticated multibulk length")});
}

// ------------------------------------------------------------ inline quoting

TEST_CASE("double quotes group words and take C-like escapes", "[resp]") {
  CHECK(ParseWhole("SET k \"hello world\"\r\n") ==
        std::vector<Event>{Cmd({"SET", "k", "hello world"})});
  CHECK(ParseWhole("\"\\x41\\x4a\\x4A\\x00\"\r\n") ==
        std::vector<Event>{Cmd({std::string("AJJ\0", 4)})});
  CHECK(ParseWhole("\"\\n\\r\\t\\b\\a\\\\\\\"\\q\\'\"\r\n") ==
        std::vector<Event>{Cmd({"\n\r\t\b\a\\\"q'"})});
  // Not two hex digits: a plain escaped 'x'.
  CHECK(ParseWhole("\"\\xZZ\\x4\"\r\n") == std::vector<Event>{Cmd({"xZZx4"})});
  // CR, tabs and single quotes inside double quotes are plain bytes.
  CHECK(ParseWhole("\"a\rb\tc'd\"\r\n") == std::vector<Event>{Cmd({"a\rb\tc'd"})});
}

TEST_CASE("single quotes take only \\' as an escape", "[resp]") {
  CHECK(ParseWhole("'it\\'s'\r\n") == std::vector<Event>{Cmd({"it's"})});
  CHECK(ParseWhole("'a\\nb\\x41\"'\r\n") == std::vector<Event>{Cmd({"a\\nb\\x41\""})});
}

TEST_CASE("a quote inside a bare word opens a quoted part", "[resp]") {
  CHECK(ParseWhole("a\"b c\"\r\n") == std::vector<Event>{Cmd({"ab c"})});
  CHECK(ParseWhole("key'x y' z\r\n") == std::vector<Event>{Cmd({"keyx y", "z"})});
}

TEST_CASE("a closing quote may be followed by any C whitespace or the end", "[resp]") {
  CHECK(ParseWhole("\"a\"\tb\r\n") == std::vector<Event>{Cmd({"a", "b"})});
  CHECK(ParseWhole("\"a\"\vb\r\n") == std::vector<Event>{Cmd({"a", "b"})});
  CHECK(ParseWhole("'a'\fb\r\n") == std::vector<Event>{Cmd({"a", "b"})});
  CHECK(ParseWhole("\"a\"\r\n") == std::vector<Event>{Cmd({"a"})});
  CHECK(ParseWhole("\"a\"\rb\r\n") == std::vector<Event>{Cmd({"a", "b"})});
}

TEST_CASE("bare words end at space, tab and CR only; VT and FF are part of them", "[resp]") {
  CHECK(ParseWhole("a\vb c\fd\r\n") == std::vector<Event>{Cmd({"a\vb", "c\fd"})});
  CHECK(ParseWhole("\va \fb\r\n") == std::vector<Event>{Cmd({"a", "b"})});
  CHECK(ParseWhole("a\rb\r\n") == std::vector<Event>{Cmd({"a", "b"})});
  CHECK(ParseWhole("caf\xc3\xa9 \xff\r\n") == std::vector<Event>{Cmd({"caf\xc3\xa9", "\xff"})});
}

TEST_CASE("only the CR right before the LF is stripped from an inline line", "[resp]") {
  CHECK(ParseWhole("\"a\r\"\r\n") == std::vector<Event>{Cmd({"a\r"})});
  CHECK(ParseWhole("'x\r'\n") == std::vector<Event>{Cmd({"x\r"})});
}

TEST_CASE("SplitInlineArgs and ParseStrictInt64 follow Redis", "[resp]") {
  Args out;
  CHECK(ephpm::resp::SplitInlineArgs("", 0, &out));
  CHECK(out.empty());
  const std::string three = "a \"b\" 'c'";
  CHECK(ephpm::resp::SplitInlineArgs(three.data(), three.size(), &out));
  CHECK(out == Args{"a", "b", "c"});
  // Read up to a NUL, like a C string.
  CHECK(ephpm::resp::SplitInlineArgs("a b\0c", 5, &out));
  CHECK(out == Args{"a", "b"});
  CHECK_FALSE(ephpm::resp::SplitInlineArgs("\"a\0\"", 4, &out));

  long long v = 0;
  auto parse = [&v](const std::string& s) {
    return ephpm::resp::ParseStrictInt64(s.data(), s.size(), &v);
  };
  CHECK(parse("0"));
  CHECK(v == 0);
  CHECK(parse("-9223372036854775808"));
  CHECK(v == INT64_MIN);
  CHECK(parse("9223372036854775807"));
  CHECK(v == INT64_MAX);
  for (const char* bad : {"", "-", "-0", "00", "01", "+1", " 1", "1 ", "1a", "9223372036854775808",
                          "-9223372036854775809", "18446744073709551616"}) {
    INFO(bad);
    CHECK_FALSE(parse(bad));
  }
}

// ------------------------------------------------------------- binary data

TEST_CASE("bulk payloads are binary-safe: NUL, CR and LF inside", "[resp]") {
  const std::string value("a\0\r\nb\n\r\0", 8);
  const Args args{"SET", std::string("k\0\r\n", 4), value, ""};
  CHECK(ParseWhole(Multibulk(args)) == std::vector<Event>{Cmd(args)});
  CHECK(ParseBytewise(Multibulk(args)) == std::vector<Event>{Cmd(args)});
  std::string all_bytes;
  for (int i = 0; i < 256; ++i) all_bytes.push_back(static_cast<char>(i));
  CHECK(ParseWhole(Multibulk({all_bytes, all_bytes})) ==
        std::vector<Event>{Cmd({all_bytes, all_bytes})});
}

TEST_CASE("a large bulk arriving in many reads is absorbed as it comes", "[resp]") {
  std::string payload(3 * 1024 * 1024 + 7, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>((i * 131) ^ (i >> 9));
  const std::string wire = Multibulk({"SET", "big", payload}) + "PING\r\n";

  Connection c;
  std::vector<Event> events;
  size_t max_buffered = 0;
  for (size_t off = 0; off < wire.size(); off += 1000) {
    std::vector<Event> got = c.Read(wire.substr(off, 1000));
    events.insert(events.end(), got.begin(), got.end());
    max_buffered = std::max(max_buffered, c.buffer.size());
  }
  CHECK(events == (std::vector<Event>{Cmd({"SET", "big", payload}), Cmd({"PING"})}));
  // The parser took the payload into its own state read by read: the
  // caller's buffer never held more than a read.
  CHECK(max_buffered < 1000);
}

TEST_CASE("many zero-length and tiny bulks in one request", "[resp]") {
  const Args args(5000, "");
  CHECK(ParseWhole(Multibulk(args)) == std::vector<Event>{Cmd(args)});
  Args mixed;
  for (int i = 0; i < 2000; ++i) mixed.push_back(std::string(static_cast<size_t>(i % 7), 'q'));
  CHECK(ParseBytewise(Multibulk(mixed)) == std::vector<Event>{Cmd(mixed)});
}

TEST_CASE("one argv reused for every request, as the server does, gets each request exactly",
          "[resp]") {
  // A request is handed over by swapping vectors, and the caller's old
  // strings stay in the parser for their buffers: longer, shorter, more and
  // fewer arguments, a big one, and strings the caller took or changed
  // must never show through.
  const std::vector<Args> requests = {
      {"SET", std::string(40, 'k'), std::string(300, 'v')},
      {"GET", "k"},
      {"MSET", "a", "1", "b", "2", "c", "3"},
      {"PING"},
      {"SET", "x", std::string(100000, 'z')},  // past what the parser keeps
      {"SET", "y", "short"},
      {"ECHO", ""},
      {"SET", std::string(40, 'k'), std::string(300, 'w')},
  };
  std::string wire;
  for (const Args& r : requests) wire += Multibulk(r);
  for (const size_t chunk : {wire.size(), size_t{7}, size_t{1}}) {
    INFO("reads of " << chunk << " bytes");
    RequestParser parser;
    Args argv;
    std::string buffer;
    size_t next = 0;
    for (size_t off = 0; off < wire.size(); off += chunk) {
      buffer += wire.substr(off, chunk);
      for (;;) {
        size_t consumed = 0;
        std::string error;
        const Result r = parser.Next(buffer.data(), buffer.size(), &consumed, &argv, &error);
        buffer.erase(0, consumed);
        if (r == Result::kNeedMore) break;
        REQUIRE(r == Result::kCommand);
        REQUIRE(next < requests.size());
        CHECK(argv == requests[next]);
        ++next;
        // What a command may do with its arguments.
        const std::string taken = std::move(argv.front());
        argv.back().append("junk");
      }
    }
    CHECK(next == requests.size());
  }
}

// ----------------------------------------------------------- split reads

TEST_CASE("a pipelined batch gives the same outcomes split at every byte boundary", "[resp]") {
  const std::string batch = Multibulk({"SET", "k", std::string("v\0\r\n", 4)}) + "GET k\r\n" +
                            "\r\n" + "*0\r\n" + Multibulk({"MSET", "a", "1", "b", ""}) +
                            "ECHO \"x y\" 'z\\'w' \"\\x41\"\n" + "*-1\r\n" + "   \t\r\n" +
                            "*1\r\n$3\r\nfooXY" +  // payload's trailing bytes skipped
                            Multibulk({"PING"}) + "INCR counter\r\n";
  const std::vector<Event> expected = {
      Cmd({"SET", "k", std::string("v\0\r\n", 4)}),
      Cmd({"GET", "k"}),
      Empty(),
      Empty(),
      Cmd({"MSET", "a", "1", "b", ""}),
      Cmd({"ECHO", "x y", "z'w", "A"}),
      Empty(),
      Empty(),
      Cmd({"foo"}),
      Cmd({"PING"}),
      Cmd({"INCR", "counter"}),
  };
  REQUIRE(ParseWhole(batch) == expected);
  CHECK(ParseBytewise(batch) == expected);
  for (size_t i = 0; i <= batch.size(); ++i) {
    INFO("split at " << i);
    REQUIRE(ParseInReads({batch.substr(0, i), batch.substr(i)}) == expected);
  }
  for (size_t i = 0; i <= batch.size(); i += 3) {
    for (size_t j = i; j <= batch.size(); j += 5) {
      INFO("split at " << i << " and " << j);
      REQUIRE(ParseInReads({batch.substr(0, i), batch.substr(i, j - i), batch.substr(j)}) ==
              expected);
    }
  }
}

TEST_CASE("an error ending a pipelined batch is found at every split", "[resp]") {
  const std::string batch = "PING\r\n" + Multibulk({"GET", "k"}) + "*2\r\n$1\r\na\r\n$1x\r\n";
  const std::vector<Event> expected = {Cmd({"PING"}), Cmd({"GET", "k"}), Err(kInvalidBulk)};
  REQUIRE(ParseWhole(batch) == expected);
  CHECK(ParseBytewise(batch) == expected);
  for (size_t i = 0; i <= batch.size(); ++i) {
    INFO("split at " << i);
    REQUIRE(ParseInReads({batch.substr(0, i), batch.substr(i)}) == expected);
  }
}

// PeekKey reads only a whole canonical request, never a byte past the end
// it is given (each cut is copied to a buffer of exactly its length, so
// ASan sees any read past it).
TEST_CASE("PeekKey finds a whole request's key and length, and nothing in a cut one", "[resp]") {
  using ephpm::resp::PeekKey;
  const std::string first = Multibulk({"SET", "key:000042", "some value"});
  const std::string input = first + Multibulk({"GET", "other"});
  std::string_view key;
  size_t len = 0;
  REQUIRE(PeekKey(input.data(), input.size(), &key, &len));
  CHECK(key == "key:000042");
  CHECK(len == first.size());
  REQUIRE(PeekKey(input.data() + len, input.size() - len, &key, &len));
  CHECK(key == "other");
  for (size_t cut = 0; cut < first.size(); ++cut) {
    INFO("cut to " << cut);
    const std::unique_ptr<char[]> exact(new char[cut == 0 ? 1 : cut]);
    std::copy(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(cut), exact.get());
    CHECK_FALSE(PeekKey(exact.get(), cut, &key, &len));
  }
  // Not a canonical multibulk of 2 to 64 arguments: no key.
  std::vector<std::string> many(65, "x");
  for (const std::string& other : {
           std::string("GET k\r\n"),                         // inline
           Multibulk({"PING"}),                              // no second argument
           Multibulk(many),                                  // too many to skip cheaply
           std::string("*2\r\n$3\r\nGET\r\n$-1\r\n"),        // a negative length
           std::string("*2\r\n$3\r\nGET\r\n$1x\r\nk\r\n"),   // a length that is not a number
           std::string("*2\r\n$3\r\nGET\r\n$1\r\nkXY"),      // no CRLF after the data
           std::string("*2\r\n$3\r\nGET\r\n:1\r\nk\r\n"),    // not a bulk string
           std::string("*2\r\n$3\r\nGET\r\n$1234567890\r\nk\r\n"),  // ten digits
           std::string("*1234567890\r\n$3\r\nGET\r\n"),      // ten digits
           std::string("*+2\r\n$3\r\nGET\r\n$1\r\nk\r\n"),   // a sign
       }) {
    INFO(other);
    CHECK_FALSE(PeekKey(other.data(), other.size(), &key, &len));
  }
  many.pop_back();
  const std::string most = Multibulk(many);
  REQUIRE(PeekKey(most.data(), most.size(), &key, &len));
  CHECK(len == most.size());
}

// Whatever the bytes, when PeekKey and the parser both find a request at
// the start of the input, they agree on its key and its length.  Requests
// built canonically are always found; then bytes are changed at random.
TEST_CASE("PeekKey agrees with the parser on random and damaged input", "[resp]") {
  using ephpm::resp::PeekKey;
  std::mt19937 rng(20261205);
  const char alphabet[] = "*$\r\n0123456789-+:abcXYZ ";
  size_t found = 0, agreed = 0;
  for (int round = 0; round < 20000; ++round) {
    Args argv(1 + rng() % 5);
    for (std::string& a : argv) {
      a.resize(rng() % 12);
      for (char& ch : a) ch = alphabet[rng() % (sizeof alphabet - 1)];
    }
    std::string bytes = Multibulk(argv) + Multibulk({"PING"});
    const bool damaged = rng() % 2 == 0;
    if (damaged) {
      for (int n = 1 + static_cast<int>(rng() % 3); n > 0; --n) {
        bytes[rng() % bytes.size()] = alphabet[rng() % (sizeof alphabet - 1)];
      }
    }
    const std::unique_ptr<char[]> exact(new char[bytes.size()]);
    std::copy(bytes.begin(), bytes.end(), exact.get());
    std::string_view key;
    size_t len = 0;
    const bool peeked = PeekKey(exact.get(), bytes.size(), &key, &len);
    if (!damaged) {
      INFO(bytes);
      REQUIRE(peeked == (argv.size() >= 2));
    }
    if (!peeked) continue;
    ++found;
    REQUIRE(len <= bytes.size());
    RequestParser parser;
    size_t consumed = 0;
    Args parsed;
    std::string error;
    if (parser.Next(exact.get(), bytes.size(), &consumed, &parsed, &error) != Result::kCommand) {
      continue;
    }
    INFO(bytes);
    REQUIRE(parsed.size() >= 2);
    CHECK(parsed[1] == key);
    CHECK(consumed == len);
    ++agreed;
  }
  CHECK(found > 10000);
  CHECK(agreed > 10000);
}
