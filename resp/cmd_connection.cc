// Connection commands: PING, ECHO, QUIT, SELECT, AUTH, HELLO, CLIENT.

#include "command_table.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ephpm {
namespace resp {
namespace cmd {

void CmdPing(Ctx& c) {
  if (c.argv.size() > 2) return ArityError(c);
  if (c.argv.size() == 1) return c.w.SimpleString("PONG");
  c.w.Bulk(c.argv[1]);
}

void CmdEcho(Ctx& c) { c.w.Bulk(c.argv[1]); }

void CmdQuit(Ctx& c) {
  c.client->close_after_reply = true;
  Ok(c);
}

// RESET (Redis 6.2): the connection as it was when it connected: no MULTI
// (its queue discarded), no WATCH, database 0, no name, and not
// authenticated when a password is set.  Runs at once, even in MULTI.
void CmdReset(Ctx& c) {
  ClientState* client = c.client;
  client->in_multi = false;
  client->multi_dirty = false;
  client->queued.clear();
  c.dispatcher->Forget(client);
  client->db = 0;
  client->name.clear();
  client->authenticated = c.server->password().empty();
  c.w.SimpleString("RESET");
}

void CmdSelect(Ctx& c) {
  int64_t db = 0;
  if (!ParseLL(c.argv[1], &db)) return c.w.Error(kNotInteger);
  // Redis's getIntFromObjectOrReply: an int64 outside int has its own text.
  if (db < INT32_MIN || db > INT32_MAX) {
    return c.w.Error("ERR value is out of range, value must between -2147483648 and 2147483647");
  }
  if (c.store->options().replicator != nullptr) {
    return c.w.Error("ERR SELECT is not allowed in cluster mode");
  }
  if (db < 0 || static_cast<uint64_t>(db) >= c.store->options().databases) {
    return c.w.Error("ERR DB index is out of range");
  }
  c.client->db = static_cast<uint32_t>(db);
  Ok(c);
}

namespace {

// Compares without leaking where the first difference is.
bool SameSecret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

// AUTH's decision; replies an error and returns false when refused.
bool Authenticate(Ctx& c, std::string_view user, std::string_view pass) {
  const std::string& want = c.server->password();
  const bool ok = user == "default" && (want.empty() || SameSecret(pass, want));
  if (!ok) {
    c.w.Error(kWrongPass);
    return false;
  }
  c.client->authenticated = true;
  return true;
}

}  // namespace

void CmdAuth(Ctx& c) {
  if (c.argv.size() > 3) return c.w.Error(kSyntaxErr);
  if (c.argv.size() == 2 && c.server->password().empty()) {
    return c.w.Error(
        "ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?");
  }
  const std::string_view user = c.argv.size() == 3 ? std::string_view(c.argv[1]) : "default";
  if (Authenticate(c, user, c.argv.back())) Ok(c);
}

namespace {

bool ValidClientName(std::string_view name) {
  for (char ch : name) {
    if (ch < '!' || ch > '~') return false;
  }
  return true;
}

constexpr std::string_view kBadClientName =
    "ERR Client names cannot contain spaces, newlines or special characters.";

}  // namespace

void CmdHello(Ctx& c) {
  int64_t ver = 0;
  if (c.argv.size() >= 2) {
    if (!ParseLL(c.argv[1], &ver)) {
      return c.w.Error("ERR Protocol version is not an integer or out of range");
    }
    if (ver < 2 || ver > 3) return c.w.Error("NOPROTO unsupported protocol version");
  }
  // Redis 7.0 acts on each option as it reads it, left to right: AUTH
  // authenticates and SETNAME names the connection at once, so that a later
  // bad option (or a later wrong password) still leaves them done.
  for (size_t j = 2; j < c.argv.size(); ++j) {
    const size_t more = c.argv.size() - 1 - j;
    if (IEq(c.argv[j], "AUTH") && more >= 2) {
      if (!Authenticate(c, c.argv[j + 1], c.argv[j + 2])) return;
      j += 2;
    } else if (IEq(c.argv[j], "SETNAME") && more >= 1) {
      const std::string& name = c.argv[++j];
      if (!ValidClientName(name)) return c.w.Error(kBadClientName);
      c.client->name = name;
    } else {
      return c.w.Error("ERR Syntax error in HELLO option '" + std::string(CStr(c.argv[j], 1024)) +
                       "'");
    }
  }
  if (!c.client->authenticated) {
    return c.w.Error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        "HELLO AUTH <user> <pass> option can be used to authenticate the client and "
        "select the RESP protocol version at the same time");
  }
  // Only RESP2 is spoken here: HELLO 3 fails where Redis would switch to
  // RESP3, after doing all that Redis does first.
  if (ver == 3) return c.w.Error("NOPROTO unsupported protocol version");
  c.w.ArrayHeader(14);
  c.w.Bulk("server");
  c.w.Bulk("redis");
  c.w.Bulk("version");
  c.w.Bulk(kRedisCompatVersion);
  c.w.Bulk("proto");
  c.w.Integer(2);
  c.w.Bulk("id");
  c.w.Integer(static_cast<int64_t>(c.client->id));
  c.w.Bulk("mode");
  c.w.Bulk("standalone");
  c.w.Bulk("role");
  c.w.Bulk("master");
  c.w.Bulk("modules");
  c.w.ArrayHeader(0);
}

void CmdClientId(Ctx& c) { c.w.Integer(static_cast<int64_t>(c.client->id)); }

// CLIENT UNBLOCK id [TIMEOUT|ERROR]: :1 when that client was waiting in a
// blocking command and now gets its timeout's reply (or the UNBLOCKED
// error), :0 otherwise.
void CmdClientUnblock(Ctx& c) {
  if (c.argv.size() > 4) {
    return c.w.Error("ERR unknown subcommand or wrong number of arguments for '" +
                     std::string(CStr(c.argv[1], 128)) + "'. Try CLIENT HELP.");
  }
  bool error = false;
  if (c.argv.size() == 4) {
    if (IEq(c.argv[3], "error")) {
      error = true;
    } else if (!IEq(c.argv[3], "timeout")) {
      return c.w.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
    }
  }
  int64_t id = 0;
  if (!ParseLL(c.argv[2], &id)) return c.w.Error(kNotInteger);
  const bool unblocked = id > 0 && c.server->UnblockClient(static_cast<uint64_t>(id), error);
  c.w.Integer(unblocked ? 1 : 0);
}

void CmdClientGetName(Ctx& c) {
  if (c.client->name.empty()) return c.w.NullBulk();
  c.w.Bulk(c.client->name);
}

void CmdClientSetName(Ctx& c) {
  if (!ValidClientName(c.argv[2])) return c.w.Error(kBadClientName);
  c.client->name = c.argv[2];
  Ok(c);
}

void CmdClientInfo(Ctx& c) { c.w.Bulk(ClientListLine(*c.client) + "\n"); }

// CLIENT LIST [TYPE type]: every connection here is a normal client.
void CmdClientList(Ctx& c) {
  if (c.argv.size() == 4 && IEq(c.argv[2], "TYPE")) {
    const std::string& type = c.argv[3];
    if (IEq(type, "master") || IEq(type, "replica") || IEq(type, "slave") ||
        IEq(type, "pubsub")) {
      return c.w.Bulk("");
    }
    if (!IEq(type, "normal")) {
      return c.w.Error("ERR Unknown client type '" + std::string(CStr(type, type.size())) + "'");
    }
  } else if (c.argv.size() != 2) {
    return c.w.Error(kSyntaxErr);
  }
  std::string all;
  for (const std::string& line : c.server->ClientList()) all.append(line).append("\n");
  c.w.Bulk(all);
}

// Redis 7.0's lines for the subcommands ephpm has, word for word (the
// differential test checks they are a subsequence of Redis's help).
void CmdClientHelp(Ctx& c) {
  static const char* const lines[] = {
      "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "LIST [options ...]",
      "    Return information about client connections. Options:",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Return clients of specified type.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "UNBLOCK <clientid> [TIMEOUT|ERROR]",
      "    Unblock the specified blocked client.",
      "HELP",
      "    Prints this help.",
  };
  HelpReply(c, lines);
}

}  // namespace cmd
}  // namespace resp
}  // namespace ephpm
