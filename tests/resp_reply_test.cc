// The RESP2 reply writer: the exact bytes Redis sends for each reply type.

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "resp/parser.h"
#include "resp/reply.h"

using ephpm::resp::ReplyWriter;

TEST_CASE("simple strings and errors are one line each", "[resp]") {
  std::string out;
  ReplyWriter w(&out);
  w.SimpleString("OK");
  w.SimpleString("");
  w.Error("ERR Protocol error: invalid bulk length");
  w.Error("WRONGTYPE Operation against a key holding the wrong kind of value");
  CHECK(out ==
        "+OK\r\n"
        "+\r\n"
        "-ERR Protocol error: invalid bulk length\r\n"
        "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
}

TEST_CASE("CR and LF inside a status or error line become spaces", "[resp]") {
  std::string out;
  ReplyWriter w(&out);
  w.Error("ERR unknown command 'a\r\nb'");
  w.SimpleString("x\ny\rz");
  CHECK(out == "-ERR unknown command 'a  b'\r\n+x y z\r\n");
}

TEST_CASE("integers are written in decimal, extremes included", "[resp]") {
  std::string out;
  ReplyWriter w(&out);
  w.Integer(0);
  w.Integer(1);
  w.Integer(-1);
  w.Integer(10);
  w.Integer(1234567890123);
  w.Integer(INT64_MAX);
  w.Integer(INT64_MIN);
  CHECK(out ==
        ":0\r\n:1\r\n:-1\r\n:10\r\n:1234567890123\r\n"
        ":9223372036854775807\r\n:-9223372036854775808\r\n");
}

TEST_CASE("bulk strings carry a length and any bytes", "[resp]") {
  std::string out;
  ReplyWriter w(&out);
  w.Bulk("bar");
  w.Bulk("");
  w.Bulk(std::string("a\0\r\nb", 5));
  w.NullBulk();
  CHECK(out == std::string("$3\r\nbar\r\n$0\r\n\r\n$5\r\na\0\r\nb\r\n$-1\r\n", 31));
  std::string big(100000, 'z');
  out.clear();
  w.Bulk(big);
  CHECK(out == "$100000\r\n" + big + "\r\n");
}

TEST_CASE("array headers and the null array", "[resp]") {
  std::string out;
  ReplyWriter w(&out);
  w.ArrayHeader(0);
  w.ArrayHeader(2);
  w.Bulk("a");
  w.NullBulk();
  w.NullArray();
  w.Raw(":5\r\n");
  CHECK(out == "*0\r\n*2\r\n$1\r\na\r\n$-1\r\n*-1\r\n:5\r\n");
  CHECK(w.out() == &out);
}

TEST_CASE("the writer appends to what the buffer holds", "[resp]") {
  std::string out = "+PONG\r\n";
  ReplyWriter(&out).Integer(42);
  CHECK(out == "+PONG\r\n:42\r\n");
}

TEST_CASE("FormatInt64 writes the digits at the end of its buffer", "[resp]") {
  char buf[20];
  for (int64_t v : {int64_t{0}, int64_t{7}, int64_t{-7}, int64_t{100}, INT64_MAX, INT64_MIN}) {
    const char* start = ephpm::resp::FormatInt64(v, buf);
    CHECK(std::string(start, static_cast<const char*>(buf + sizeof(buf))) == std::to_string(v));
  }
}

TEST_CASE("an array of bulks written by the writer parses back as a request", "[resp]") {
  std::string out;
  ReplyWriter w(&out);
  w.ArrayHeader(3);
  w.Bulk("SET");
  w.Bulk(std::string("k\0", 2));
  w.Bulk("v\r\n");
  ephpm::resp::RequestParser p;
  size_t consumed = 0;
  std::vector<std::string> argv;
  std::string error;
  REQUIRE(p.Next(out.data(), out.size(), &consumed, &argv, &error) ==
          ephpm::resp::RequestParser::Result::kCommand);
  CHECK(consumed == out.size());
  CHECK(argv == std::vector<std::string>{"SET", std::string("k\0", 2), "v\r\n"});
}
