// Shared by resp_diff_test.cc: the script tokenizer and escaping, RESP replies
// parsed into trees, and the normalisation a script's modifiers ask for.

#ifndef EPHPM_TESTS_RESP_DIFF_REPLY_H_
#define EPHPM_TESTS_RESP_DIFF_REPLY_H_

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace resp_diff {

// ---- text helpers ---------------------------------------------------------------------

inline std::string Escape(const std::string& s, size_t max = 4000) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    if (out.size() > max) {
      out += "...(" + std::to_string(s.size()) + " bytes)";
      break;
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '\r': out += "\\r"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out + "\"";
}

inline int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A script token: `quoted` tells whether it was written in double quotes
// (modifiers and directives are recognised only unquoted).
struct Token {
  std::string text;
  bool quoted = false;
};

// Splits a script line into tokens (see README: quoting).
inline std::vector<Token> Tokenize(const std::string& line) {
  std::vector<Token> out;
  size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) return out;
    Token t;
    if (line[i] == '"') {
      t.quoted = true;
      ++i;
      bool closed = false;
      while (i < line.size()) {
        char c = line[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c != '\\') {
          t.text.push_back(c);
          continue;
        }
        if (i >= line.size()) throw std::invalid_argument("backslash at end of line");
        c = line[i++];
        switch (c) {
          case 'n': t.text.push_back('\n'); break;
          case 'r': t.text.push_back('\r'); break;
          case 't': t.text.push_back('\t'); break;
          case '0': t.text.push_back('\0'); break;
          case '\\': t.text.push_back('\\'); break;
          case '"': t.text.push_back('"'); break;
          case 'x': {
            if (i + 2 > line.size() || HexDigit(line[i]) < 0 || HexDigit(line[i + 1]) < 0) {
              throw std::invalid_argument("bad \\x escape");
            }
            t.text.push_back(static_cast<char>(HexDigit(line[i]) * 16 + HexDigit(line[i + 1])));
            i += 2;
            break;
          }
          default: throw std::invalid_argument(std::string("unknown escape \\") + c);
        }
      }
      if (!closed) throw std::invalid_argument("unterminated quote");
      if (i < line.size() && line[i] != ' ' && line[i] != '\t') {
        throw std::invalid_argument("a closing quote must end the token");
      }
    } else {
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') t.text.push_back(line[i++]);
      // {N*TEXT}: TEXT repeated N times, for big arguments.
      const std::string& w = t.text;
      const size_t star = w.find('*');
      if (w.size() >= 5 && w.front() == '{' && w.back() == '}' && star != std::string::npos &&
          star > 1 && star + 2 < w.size() &&
          w.find_first_not_of("0123456789", 1) == star) {
        const size_t n = std::stoul(w.substr(1, star - 1));
        const std::string body = w.substr(star + 1, w.size() - star - 2);
        std::string big;
        big.reserve(n * body.size());
        for (size_t k = 0; k < n; ++k) big += body;
        t.text = std::move(big);
        t.quoted = true;  // never a modifier
      }
    }
    out.push_back(std::move(t));
  }
}

// ---- RESP replies -------------------------------------------------------------------

// One reply as a tree: `head` is its first line (for a bulk string, the
// whole bulk with its payload), `kids` the elements of an array.
struct Node {
  std::string head;
  std::vector<Node> kids;

  std::string Bytes() const {
    std::string s = head;
    for (const Node& k : kids) s += k.Bytes();
    return s;
  }
  bool IsArray() const { return !head.empty() && head[0] == '*' && head != "*-1\r\n"; }
};

enum class Parse { kOk, kIncomplete, kMalformed };

// Parses one reply at b[*pos..]; advances *pos past it on kOk.
inline Parse ParseReply(const std::string& b, size_t* pos, Node* out) {
  const size_t eol = b.find("\r\n", *pos);
  if (eol == std::string::npos) return *pos < b.size() ? Parse::kIncomplete : Parse::kIncomplete;
  if (eol == *pos) return Parse::kMalformed;
  const char type = b[*pos];
  const std::string line = b.substr(*pos, eol + 2 - *pos);
  const std::string body = b.substr(*pos + 1, eol - *pos - 1);
  switch (type) {
    case '+':
    case '-':
    case ':':
    case '_':  // RESP3 (Redis after HELLO 3): null, boolean, double, big number
    case '#':
    case ',':
    case '(':
      out->head = line;
      *pos = eol + 2;
      return Parse::kOk;
    case '$':
    case '=':  // RESP3 verbatim string and blob error
    case '!': {
      char* end = nullptr;
      const long long n = std::strtoll(body.c_str(), &end, 10);
      if (end == body.c_str() || *end != '\0' || n < -1) return Parse::kMalformed;
      if (n == -1) {
        out->head = line;
        *pos = eol + 2;
        return Parse::kOk;
      }
      const size_t total = line.size() + static_cast<size_t>(n) + 2;
      if (b.size() - *pos < total) return Parse::kIncomplete;
      out->head = b.substr(*pos, total);
      if (out->head.compare(total - 2, 2, "\r\n") != 0) return Parse::kMalformed;
      *pos += total;
      return Parse::kOk;
    }
    case '*':
    case '~':  // RESP3 set, push, map (2n elements)
    case '>':
    case '%': {
      char* end = nullptr;
      long long n = std::strtoll(body.c_str(), &end, 10);
      if (end == body.c_str() || *end != '\0' || n < -1) return Parse::kMalformed;
      if (type == '%' && n > 0) n *= 2;
      size_t p = eol + 2;
      Node node;
      node.head = line;
      for (long long k = 0; k < n; ++k) {
        Node kid;
        const Parse r = ParseReply(b, &p, &kid);
        if (r != Parse::kOk) return r;
        node.kids.push_back(std::move(kid));
      }
      *out = std::move(node);
      *pos = p;
      return Parse::kOk;
    }
    default:
      return Parse::kMalformed;
  }
}

// ---- normalisation and checks -------------------------------------------------------

struct Modifiers {
  bool sort = false;        // !sort: array elements in sorted order
  bool sort_pairs = false;  // !sortpairs: flat [k, v, k, v...] array, pairs sorted
  bool scan = false;        // !scan: [cursor, [elements]], elements sorted
  bool scan_pairs = false;  // !scanpairs: [cursor, [k, v, ...]], pairs sorted
  bool scan_all = false;    // !scanall: SCAN iterated to cursor 0, the union compared
  bool closes = false;      // !closes: after the reply the server must close
  bool subseq = false;      // !subseq: ephpm's array is a subsequence of redis's
  std::optional<long long> tolerance;  // !tol=N: integer replies within N
  std::optional<std::string> both_re, redis_re, ephpm_re;  // !both= !redis= !ephpm=
};

inline void SortKids(Node* n, bool pairs) {
  if (!n->IsArray()) return;
  if (!pairs) {
    std::sort(n->kids.begin(), n->kids.end(),
              [](const Node& a, const Node& b) { return a.Bytes() < b.Bytes(); });
    return;
  }
  if (n->kids.size() % 2 != 0) return;
  std::vector<std::pair<std::string, std::pair<Node, Node>>> ps;
  for (size_t i = 0; i < n->kids.size(); i += 2) {
    ps.push_back({n->kids[i].Bytes() + n->kids[i + 1].Bytes(), {n->kids[i], n->kids[i + 1]}});
  }
  std::sort(ps.begin(), ps.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  n->kids.clear();
  for (auto& p : ps) {
    n->kids.push_back(std::move(p.second.first));
    n->kids.push_back(std::move(p.second.second));
  }
}

inline Node Normalise(Node n, const Modifiers& m) {
  if (m.sort || m.sort_pairs) SortKids(&n, m.sort_pairs);
  if ((m.scan || m.scan_pairs) && n.IsArray() && n.kids.size() == 2) {
    SortKids(&n.kids[1], m.scan_pairs);
  }
  return n;
}

inline bool ParseInteger(const std::string& bytes, long long* v) {
  if (bytes.size() < 4 || bytes[0] != ':') return false;
  char* end = nullptr;
  *v = std::strtoll(bytes.c_str() + 1, &end, 10);
  return std::string(end) == "\r\n";
}

}  // namespace resp_diff

#endif  // EPHPM_TESTS_RESP_DIFF_REPLY_H_
