#include "ephpm/host_port.h"

#include "ephpm/number_text.h"

namespace ephpm {

bool SplitHostPort(std::string_view s, std::string* host, uint16_t* port) {
  const size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view h = s.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
    h = h.substr(1, h.size() - 2);  // [::1]:6380
  }
  int64_t p = 0;
  if (!ParseInt64(s.substr(colon + 1), &p) || p < 0 || p > 65535) return false;
  host->assign(h.data(), h.size());
  *port = static_cast<uint16_t>(p);
  return true;
}

}  // namespace ephpm
