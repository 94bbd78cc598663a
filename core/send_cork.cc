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
  // (Uncork only writes or posts: it never queues a frame or notes a link.)
  auto& links = tl_cork.links;
  for (size_t i = 0; i < links.size(); ++i) links[i]->Uncork();
  links.clear();
}

}  // namespace ephpm
