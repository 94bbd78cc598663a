#include "fault_command.h"

#include <cctype>
#include <string>
#include <vector>

#include "ephpm/number_text.h"

#ifndef EPHPM_CLUSTER_TEST_HOOKS
#error "fault_command.cc belongs in ephpm-faulty only, linked with ephpm_cluster_testing"
#endif

namespace ephpm {
namespace {

constexpr const char kUsage[] =
    "ERR usage: EPHPM.FAULT DELAY|DELAYREPL <peer-id> <ms> | CUT <peer-id> 0|1 | SKEW <ms> | "
    "CLEAR";

bool KnownPeer(const cluster::ClusterNode& node, const std::string& id) {
  if (id == node.id()) return false;
  for (const auto& m : node.Members()) {
    if (m.id == id) return true;
  }
  return false;
}

}  // namespace

void AddFaultCommand(resp::RespServer* server, cluster::ClusterNode* node,
                     std::function<void(std::string_view)> log) {
  server->add_extra_command(
      "ephpm.fault", [node, log](const std::vector<std::string>& argv) -> std::string {
        if (argv.size() < 2) return kUsage;
        std::string op = argv[1];
        for (char& ch : op) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        int64_t n = 0;
        if (op == "CLEAR" && argv.size() == 2) {
          for (const auto& m : node->Members()) {
            if (m.id == node->id()) continue;
            node->TestDelay(m.id, 0);
            node->TestDelayReplication(m.id, 0);
            node->TestCutOff(m.id, false);
          }
          node->TestSkewClock(0);
        } else if (op == "SKEW" && argv.size() == 3) {
          if (!ParseInt64(argv[2], &n)) return "ERR SKEW needs milliseconds";
          node->TestSkewClock(n);
        } else if ((op == "DELAY" || op == "DELAYREPL" || op == "CUT") && argv.size() == 4) {
          if (!KnownPeer(*node, argv[2])) return "ERR not a peer of this node: '" + argv[2] + "'";
          if (op == "CUT") {
            if (argv[3] != "0" && argv[3] != "1") return "ERR CUT needs 0 or 1";
            node->TestCutOff(argv[2], argv[3] == "1");
          } else {
            if (!ParseInt64(argv[3], &n) || n < 0) return "ERR " + op + " needs milliseconds >= 0";
            if (op == "DELAY") node->TestDelay(argv[2], n);
            if (op == "DELAYREPL") node->TestDelayReplication(argv[2], n);
          }
        } else {
          return kUsage;
        }
        std::string line = "fault hook:";
        for (size_t i = 1; i < argv.size(); ++i) line += " " + argv[i];
        log(line);
        return "";
      });
}

}  // namespace ephpm
