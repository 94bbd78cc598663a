// Scripting commands: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT.  The
// engine is in scripting.cc.

#include "command_table.h"
#include "scripting.h"

namespace ephpm {
namespace resp {
namespace cmd {

void CmdEval(Ctx& c) { c.dispatcher->scripting().Eval(c, false, false); }

void CmdEvalSha(Ctx& c) { c.dispatcher->scripting().Eval(c, true, false); }

void CmdEvalRo(Ctx& c) { c.dispatcher->scripting().Eval(c, false, true); }

void CmdEvalShaRo(Ctx& c) { c.dispatcher->scripting().Eval(c, true, true); }

void CmdScriptLoad(Ctx& c) { c.dispatcher->scripting().Load(c); }

void CmdScriptExists(Ctx& c) { c.dispatcher->scripting().Exists(c); }

void CmdScriptFlush(Ctx& c) { c.dispatcher->scripting().Flush(c); }

void CmdScriptKill(Ctx& c) { c.dispatcher->scripting().Kill(c); }

// Redis 7.0's text without DEBUG, which ephpm has not.
void CmdScriptHelp(Ctx& c) {
  static const char* const kLines[] = {
      "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "EXISTS <sha1> [<sha1> ...]",
      "    Return information about the existence of the scripts in the script cache.",
      "FLUSH [ASYNC|SYNC]",
      "    Flush the Lua scripts cache. Very dangerous on replicas.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the scripts cache.",
      "    * SYNC: Synchronously flush the scripts cache.",
      "KILL",
      "    Kill the currently executing Lua script.",
      "LOAD <script>",
      "    Load a script into the scripts cache without executing it.",
      "HELP",
      "    Prints this help.",
  };
  HelpReply(c, kLines);
}

}  // namespace cmd
}  // namespace resp
}  // namespace ephpm
