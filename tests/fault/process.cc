#include "process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

namespace ephpm_fault {
namespace {

// Every child's pid, for the signal handler (which may only read atomics
// and call kill()).
constexpr size_t kMaxChildren = 64;
std::atomic<pid_t> g_children[kMaxChildren];

void Register(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) return;
  }
  // More children than slots: they still die with the driver (death signal).
}

void Unregister(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t p = pid;
    if (slot.compare_exchange_strong(p, 0)) return;
  }
}

void KillAllChildren() {
  for (auto& slot : g_children) {
    const pid_t pid = slot.load();
    if (pid > 0) ::kill(pid, SIGKILL);
  }
}

void OnFatalSignal(int sig) {
  KillAllChildren();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void InstallCleanupHandlers() {
  std::atexit(KillAllChildren);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
    struct sigaction sa {};
    sa.sa_handler = OnFatalSignal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
  // A node that dies while a client writes to it must not kill the driver.
  ::signal(SIGPIPE, SIG_IGN);
}

bool Child::Spawn(const std::vector<std::string>& argv, const std::string& log_path,
                  std::string* error) {
  Kill();
  std::string marker = "=== fault driver: starting";
  for (const std::string& a : argv) marker += " " + a;
  marker += "\n";
  const int log = ::open(log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (log < 0) {
    *error = "cannot open " + log_path + ": " + std::strerror(errno);
    return false;
  }
  if (::write(log, marker.data(), marker.size()) < 0) {
    *error = "cannot write " + log_path + ": " + std::strerror(errno);
    ::close(log);
    return false;
  }
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    ::close(log);
    if (devnull >= 0) ::close(devnull);
    return false;
  }
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the driver died before prctl
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::execv(args[0], args.data());
    static const char kExecFailed[] = "fault driver: exec failed\n";
    (void)!::write(2, kExecFailed, sizeof kExecFailed - 1);
    ::_exit(127);
  }
  ::close(log);
  if (devnull >= 0) ::close(devnull);
  pid_ = pid;
  Register(pid);
  return true;
}

void Child::Stop() {
  if (pid_ > 0) ::kill(pid_, SIGSTOP);
}

void Child::Continue() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

void Child::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  Unregister(pid_);
  pid_ = -1;
}

bool Child::Terminate(int timeout_ms, std::string* how) {
  if (pid_ <= 0) {
    *how = "not running";
    return false;
  }
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (Exited(how)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Kill();
  *how = "still running after " + std::to_string(timeout_ms) + " ms: killed";
  return false;
}

bool Child::Exited(std::string* how) {
  if (pid_ <= 0) return false;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) != pid_) return false;
  if (WIFEXITED(st)) {
    *how = "exit status " + std::to_string(WEXITSTATUS(st));
  } else if (WIFSIGNALED(st)) {
    *how = "signal " + std::to_string(WTERMSIG(st)) + " (" + strsignal(WTERMSIG(st)) + ")" +
           (WCOREDUMP(st) ? " (core dumped)" : "");
  } else {
    *how = "wait status " + std::to_string(st);
  }
  Unregister(pid_);
  pid_ = -1;
  return true;
}

size_t FileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
}

std::string WaitForLine(const Child& child, const std::string& log_path, size_t from,
                        const std::string& prefix, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    std::ifstream f(log_path, std::ios::binary);
    f.seekg(static_cast<std::streamoff>(from));
    std::string line;
    while (std::getline(f, line)) {
      if (line.compare(0, prefix.size(), prefix) == 0) return line.substr(prefix.size());
    }
    if (!child.running() || std::chrono::steady_clock::now() > deadline) return "";
    // The child may have exited: the caller finds out through Exited().
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(child.pid()), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == child.pid()) {
      return "";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string Tail(const std::string& path, size_t lines) {
  std::ifstream f(path, std::ios::binary);
  std::vector<std::string> all;
  std::string line;
  while (std::getline(f, line)) all.push_back(line);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
    out += all[i] + "\n";
  }
  return out;
}

std::vector<uint16_t> PickFreePorts(size_t n, uint64_t seed, std::string* error) {
  unsigned low = 32768, high = 60999;
  if (std::FILE* f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    if (std::fscanf(f, "%u %u", &low, &high) != 2) low = 32768;
    std::fclose(f);
  }
  // Below the ephemeral range if there is room (10000..low), else above it.
  unsigned from = 10000, to = low;
  if (low < 12000) {
    from = high + 1;
    to = 65535;
  }
  if (to <= from + n) {
    *error = "no port range outside the ephemeral ports";
    return {};
  }
  std::mt19937_64 rng(seed ^ static_cast<uint64_t>(::getpid()) ^
                      static_cast<uint64_t>(
                          std::chrono::steady_clock::now().time_since_epoch().count()));
  std::set<uint16_t> picked;
  for (int attempt = 0; attempt < 1000 && picked.size() < n; ++attempt) {
    const uint16_t port = static_cast<uint16_t>(from + rng() % (to - from));
    if (picked.count(port)) continue;
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    if (free) picked.insert(port);
  }
  if (picked.size() < n) {
    *error = "could not find " + std::to_string(n) + " free loopback ports";
    return {};
  }
  // Shuffled, not sorted: node n1 need not get the lowest port.
  std::vector<uint16_t> out(picked.begin(), picked.end());
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

}  // namespace ephpm_fault
