// The design note's scenario against the store, with real time: A takes a
// lock with a 1 s TTL and overruns it by 200 ms, B takes the lock, A releases,
// C tries.  Run once releasing with a plain delete and once with del_if_eq.

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "ephpm/store.h"

namespace {

const char* Bool(bool b) { return b ? "true" : "false"; }

int Run(ephpm::Store* store, bool with_del_if_eq) {
  const std::string key = "lock:nightly-report";
  int64_t n = 0;
  store->Del(key, &n);

  const bool a = store->SetNx(key, "a", 1000) == ephpm::SetNxOutcome::kInserted;
  std::printf("A acquires (1s TTL):       %s\n", Bool(a));
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  const bool b = store->SetNx(key, "B", 30000) == ephpm::SetNxOutcome::kInserted;
  std::printf("B acquires (30s TTL):      %s\n", Bool(b));
  if (with_del_if_eq) {
    const bool released = store->DelIfEq(key, "a") == ephpm::DelIfEqOutcome::kDeleted;
    std::printf("A releases with del_if_eq: %s\n", Bool(released));
  } else {
    int64_t removed = 0;
    store->Del(key, &removed);
    std::printf("A releases with del:       %lld\n", static_cast<long long>(removed));
  }
  const bool c = store->SetNx(key, "c", 30000) == ephpm::SetNxOutcome::kInserted;
  std::printf("C tries to acquire:        %s\n", Bool(c));
  std::string holder;
  if (store->Get(key, &holder) == ephpm::Status::kOk) {
    std::printf("lock holder now:           '%s'\n", holder.c_str());
  } else {
    std::printf("lock holder now:           none\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string only;
  if (argc == 2 && (std::strcmp(argv[1], "del") == 0 || std::strcmp(argv[1], "del_if_eq") == 0)) {
    only = argv[1];
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: %s [del|del_if_eq]\n", argv[0]);
    return 2;
  }
  std::string error;
  std::unique_ptr<ephpm::Store> store = ephpm::Store::Create(ephpm::StoreOptions{}, &error);
  if (!store) {
    std::fprintf(stderr, "ephpm-lock-demo: %s\n", error.c_str());
    return 1;
  }
  if (only.empty() || only == "del") {
    std::printf("$ release=del\n");
    Run(store.get(), false);
  }
  if (only.empty() || only == "del_if_eq") {
    if (only.empty()) std::printf("\n");
    std::printf("$ release=del_if_eq\n");
    Run(store.get(), true);
  }
  return 0;
}
