// Child processes for the fault test: started with their output in a log
// file, stopped, continued and killed by pid, and never left behind.
//
// Every child is SIGKILLed when the driver ends, however it ends: a normal
// exit (destructor and atexit), a fatal signal or a failed assertion
// (InstallCleanupHandlers), or the driver being killed (PR_SET_PDEATHSIG in
// the child; children are forked by the main thread only, since the death
// signal follows the forking thread).

#ifndef EPHPM_TESTS_FAULT_PROCESS_H_
#define EPHPM_TESTS_FAULT_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ephpm_fault {

// SIGKILLs every child still registered, on exit and on fatal signals
// (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE,
// SIGILL), then lets the signal do what it would have done.  Call once,
// early in main.
void InstallCleanupHandlers();

class Child {
 public:
  Child() = default;
  ~Child() { Kill(); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Forks and execs argv[0] with stdout and stderr appended to log_path
  // (after a marker line).  Call from the main thread.  False with *error.
  bool Spawn(const std::vector<std::string>& argv, const std::string& log_path,
             std::string* error);

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

  // SIGSTOP / SIGCONT.
  void Stop();
  void Continue();
  // SIGKILL and reap.  Idempotent.
  void Kill();
  // SIGTERM, and waits up to timeout_ms for it to end; SIGKILL after that.
  // True when it ended on its own, with *how as for Exited ("exit status
  // 0"); false with *how = "still running after N ms: killed".
  bool Terminate(int timeout_ms, std::string* how);
  // Whether it has exited on its own (not killed by Kill()); reaps it and
  // sets *how ("exit status 1", "signal 11 (core dumped)").
  bool Exited(std::string* how);

 private:
  pid_t pid_ = -1;
};

// Waits until `log_path`, from byte `from` on, has a line starting with
// `prefix` and returns the rest of that line; "" when the child exits first
// or timeout_ms passes.
std::string WaitForLine(const Child& child, const std::string& log_path, size_t from,
                        const std::string& prefix, int timeout_ms);

// The file's size (0 when it does not exist).
size_t FileSize(const std::string& path);

// The last `lines` lines of a file.
std::string Tail(const std::string& path, size_t lines);

// n distinct loopback ports that were free a moment ago, below the kernel's
// ephemeral range when possible (so that clients' outgoing connections,
// which take ephemeral ports, cannot take a killed node's port before it
// restarts).  Empty with *error on failure.
std::vector<uint16_t> PickFreePorts(size_t n, uint64_t seed, std::string* error);

}  // namespace ephpm_fault

#endif  // EPHPM_TESTS_FAULT_PROCESS_H_
