#include "ephpm/send_cork.h"

#include <algorithm>
#include <utility>

namespace ephpm {

namespace {

struct CorkState {
  int depth = 0;
  std::vector<std::shared_ptr<CorkedLink>> links;
};

thread_local CorkState tl_cork;

}  // namespace

SendCork::SendCork() { ++tl_cork.depth; }

SendCork::~SendCork() {
  if (--tl_cork.depth == 0) Release();
}

bool SendCork::Open() { return tl_cork.depth > 0; }

void SendCork::Hold(std::shared_ptr<CorkedLink> link) {
  auto& links = tl_cork.links;
  if (std::find(links.begin(), links.end(), link) == links.end()) links.push_back(std::move(link));
}

void SendCork::Release() noexcept {
  // Uncorking a link may note others (a batch of decisions, flushed, sends
  // a frame on a link that the cork holds again): rounds until none is left.
  auto& links = tl_cork.links;
  std::vector<std::shared_ptr<CorkedLink>> round;
  while (!links.empty()) {
    round.swap(links);
    for (const auto& l : round) l->Uncork();
    round.clear();
  }
}

}  // namespace ephpm
