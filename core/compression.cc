#include "compression.h"

#include <zstd.h>

namespace ephpm {

bool ZstdCompressIfSmaller(std::string_view in, int level, std::string* out) {
  const size_t bound = ZSTD_compressBound(in.size());
  if (ZSTD_isError(bound)) return false;
  out->resize(bound);
  const size_t n = ZSTD_compress(out->data(), bound, in.data(), in.size(), level);
  if (ZSTD_isError(n) || n >= in.size()) return false;
  out->resize(n);
  out->shrink_to_fit();  // the accounted size is the stored size
  return true;
}

bool ZstdDecompress(std::string_view frame, char* out, size_t size) {
  const size_t n = ZSTD_decompress(out, size, frame.data(), frame.size());
  return !ZSTD_isError(n) && n == size;
}

}  // namespace ephpm
