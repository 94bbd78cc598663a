#include "compression.h"

#include <zstd.h>

#include <memory>

#include "value_buf.h"

namespace ephpm {

bool ZstdCompressIfSmaller(std::string_view in, int level, ValueBuf* out) {
  const size_t bound = ZSTD_compressBound(in.size());
  if (ZSTD_isError(bound)) return false;
  std::unique_ptr<char[]> frame(new char[bound]);
  const size_t n = ZSTD_compress(frame.get(), bound, in.data(), in.size(), level);
  if (ZSTD_isError(n) || n >= in.size()) return false;
  *out = ValueBuf(std::string_view(frame.get(), n));  // the accounted size is the stored size
  return true;
}

uint64_t ZstdContentSize(std::string_view frame) {
  const unsigned long long n = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (n == ZSTD_CONTENTSIZE_UNKNOWN || n == ZSTD_CONTENTSIZE_ERROR) return UINT64_MAX;
  return n;
}

bool ZstdDecompress(std::string_view frame, char* out, size_t size) {
  const size_t n = ZSTD_decompress(out, size, frame.data(), frame.size());
  return !ZSTD_isError(n) && n == size;
}

}  // namespace ephpm
