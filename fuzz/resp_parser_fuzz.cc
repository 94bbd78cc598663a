// libFuzzer target for the RESP request parser (resp/parser.h), with the
// reply writer used to re-encode what it parsed.
//
// Input: one control byte, then the bytes a client sends.
//   bit 0      the client is not authenticated (Redis's smaller limits)
//   bit 1      tiny limits (bulk 40, count 6, line 24), to reach the
//              "too big" and length errors with short inputs
//   bits 2..7  seed for the sizes of the reads the stream is cut into
//
// Besides the sanitizers' checks, aborts when an invariant breaks:
//   * the stream read whole, cut into random reads, and read byte by byte
//     gives the same outcomes (commands, empty requests, error line).  The
//     one allowed difference: a "too big" error may come earlier when less
//     is buffered, since Redis's limit applies to what is buffered;
//   * *consumed never exceeds what was passed; kError consumes nothing and
//     stays; a command has at least one argument; errors are protocol errors;
//   * every command, written back as an array of bulks with ReplyWriter,
//     parses back to the same arguments;
//   * where PeekKey finds a whole request at the start of what is buffered,
//     the parser does not ask for more, and a command it parses there has
//     PeekKey's key as its second argument and PeekKey's length.
//
// Built with -DEPHPM_FUZZ_STANDALONE, it gets a main() that runs the inputs
// named on its command line (files, or directories of files) once each,
// for replaying the corpus without libFuzzer.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "resp/parser.h"
#include "resp/reply.h"

namespace {

using ephpm::resp::ParserLimits;
using ephpm::resp::ReplyWriter;
using ephpm::resp::RequestParser;
using Result = RequestParser::Result;

[[noreturn]] void Die(const char* what, int line) {
  std::fprintf(stderr, "resp_parser_fuzz: invariant violated (line %d): %s\n", line, what);
  std::abort();
}
#define FUZZ_CHECK(cond)               \
  do {                                 \
    if (!(cond)) Die(#cond, __LINE__); \
  } while (0)

struct Event {
  Result result;
  std::vector<std::string> argv;
  std::string error;
  bool operator==(const Event& o) const {
    return result == o.result && argv == o.argv && error == o.error;
  }
  bool operator!=(const Event& o) const { return !(*this == o); }
};

bool StartsWith(const std::string& s, const char* prefix) {
  return s.compare(0, std::char_traits<char>::length(prefix), prefix) == 0;
}

bool IsTooBig(const Event& e) {
  return e.result == Result::kError &&
         (e.error == "ERR Protocol error: too big inline request" ||
          e.error == "ERR Protocol error: too big mbulk count string" ||
          e.error == "ERR Protocol error: too big bulk count string");
}

// Small deterministic generator for read sizes.
struct Rng {
  uint64_t s;
  uint64_t Next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

// Feeds data[0..size) as a client would, one read at a time (read sizes from
// next_read), erasing what the parser consumed after every call, as the
// server does.  Returns every outcome but kNeedMore.
template <typename NextRead>
std::vector<Event> Run(const uint8_t* data, size_t size, const ParserLimits& limits,
                       bool authenticated, NextRead next_read) {
  RequestParser parser(limits);
  parser.set_authenticated(authenticated);
  std::vector<Event> events;
  std::string buf;
  size_t off = 0;
  while (off < size) {
    size_t n = next_read();
    if (n == 0 || n > size - off) n = size - off;
    buf.append(reinterpret_cast<const char*>(data + off), n);
    off += n;
    for (;;) {
      size_t consumed = ~size_t{0};
      std::vector<std::string> argv;
      std::string error;
      std::string_view key;
      size_t peeked_len = 0;
      const bool peeked = !parser.in_request() &&
                          ephpm::resp::PeekKey(buf.data(), buf.size(), &key, &peeked_len);
      const std::string key_copy(key);  // Next may not change buf, but be safe
      const Result r = parser.Next(buf.data(), buf.size(), &consumed, &argv, &error);
      FUZZ_CHECK(consumed <= buf.size());
      if (peeked) {
        FUZZ_CHECK(r != Result::kNeedMore);
        if (r == Result::kCommand) {
          FUZZ_CHECK(argv.size() >= 2 && argv[1] == key_copy && consumed == peeked_len);
        }
      }
      if (r == Result::kNeedMore) {
        FUZZ_CHECK(argv.empty() && error.empty());
        buf.erase(0, consumed);
        break;
      }
      if (r == Result::kError) {
        FUZZ_CHECK(consumed == 0);
        FUZZ_CHECK(argv.empty());
        FUZZ_CHECK(StartsWith(error, "ERR Protocol error: "));
        // The parser stays failed.
        size_t again_consumed = 1;
        std::string again;
        FUZZ_CHECK(parser.Next(buf.data(), buf.size(), &again_consumed, &argv, &again) ==
                   Result::kError);
        FUZZ_CHECK(again == error && again_consumed == 0);
        events.push_back(Event{r, {}, std::move(error)});
        return events;
      }
      // A request completes on a byte of this call.
      FUZZ_CHECK(consumed > 0);
      FUZZ_CHECK(error.empty());
      if (r == Result::kCommand) {
        FUZZ_CHECK(!argv.empty());
      } else {
        FUZZ_CHECK(r == Result::kEmpty && argv.empty());
      }
      FUZZ_CHECK(!parser.in_request());
      buf.erase(0, consumed);
      events.push_back(Event{r, std::move(argv), {}});
    }
  }
  return events;
}

// `cut` is the stream read in smaller pieces than `whole`.  They must agree,
// except that `cut` may stop early on a "too big" error.
void CheckSameOutcomes(const std::vector<Event>& whole, const std::vector<Event>& cut) {
  size_t k = 0;
  while (k < whole.size() && k < cut.size() && whole[k] == cut[k]) ++k;
  if (k == whole.size() && k == cut.size()) return;
  FUZZ_CHECK(k < cut.size());       // cut cannot fall short without a reason
  FUZZ_CHECK(IsTooBig(cut[k]));     // the only allowed reason
  FUZZ_CHECK(k + 1 == cut.size());  // and it ends the stream
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  ++data;
  --size;
  const bool authenticated = (control & 1) == 0;
  ParserLimits limits;
  if (control & 2) {
    limits.max_bulk_len = 40;
    limits.max_multibulk_len = 6;
    limits.max_inline_len = 24;
  }

  const std::vector<Event> whole = Run(data, size, limits, authenticated, [] { return size_t{0}; });

  Rng rng{0x9E3779B97F4A7C15ull ^ (uint64_t{control} << 32) ^ size};
  const size_t max_read = 1 + (control >> 2);  // 1..64
  const std::vector<Event> pieces = Run(data, size, limits, authenticated,
                                        [&rng, max_read] { return 1 + rng.Next() % max_read; });
  const std::vector<Event> bytewise =
      Run(data, size, limits, authenticated, [] { return size_t{1}; });

  if (size <= limits.max_inline_len) {
    // Nothing can be "too big": all three must be identical.
    FUZZ_CHECK(pieces == whole);
    FUZZ_CHECK(bytewise == whole);
  } else {
    CheckSameOutcomes(whole, pieces);
    CheckSameOutcomes(whole, bytewise);
  }

  // Every command, re-encoded as a multibulk request, parses back the same.
  std::string wire;
  ReplyWriter writer(&wire);
  std::vector<std::vector<std::string>> commands;
  for (const Event& e : whole) {
    if (e.result != Result::kCommand) continue;
    writer.ArrayHeader(e.argv.size());
    for (const std::string& arg : e.argv) writer.Bulk(arg);
    commands.push_back(e.argv);
  }
  RequestParser reparser;  // default limits, authenticated
  size_t pos = 0;
  for (const std::vector<std::string>& expected : commands) {
    size_t consumed = 0;
    std::vector<std::string> argv;
    std::string error;
    FUZZ_CHECK(reparser.Next(wire.data() + pos, wire.size() - pos, &consumed, &argv, &error) ==
               Result::kCommand);
    FUZZ_CHECK(argv == expected);
    pos += consumed;
  }
  FUZZ_CHECK(pos == wire.size());
  return 0;
}

#ifdef EPHPM_FUZZ_STANDALONE
#include <filesystem>
#include <fstream>
#include <iterator>

namespace {
int RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  int failures = 0;
  size_t runs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (!entry.is_regular_file()) continue;
        failures += RunFile(entry.path());
        ++runs;
      }
    } else {
      failures += RunFile(arg);
      ++runs;
    }
  }
  std::printf("resp_parser_fuzz: replayed %zu inputs\n", runs);
  return failures == 0 && runs > 0 ? 0 : 1;
}
#endif
