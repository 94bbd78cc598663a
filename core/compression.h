// zstd framing for stored values.  Private to core/.

#ifndef EPHPM_CORE_COMPRESSION_H_
#define EPHPM_CORE_COMPRESSION_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ephpm {

class ValueBuf;

// Compresses `in` at `level` into *out (one zstd frame that records the
// content size), in a buffer of exactly the frame's size.  Returns false
// when zstd fails or the frame would not be smaller than `in`; *out is then
// unchanged.  Throws bad_alloc.
bool ZstdCompressIfSmaller(std::string_view in, int level, ValueBuf* out);

// The content size a frame made by ZstdCompressIfSmaller records (a cheap
// read of its header); UINT64_MAX when `frame` records none or is not one.
uint64_t ZstdContentSize(std::string_view frame);

// Decompresses a frame made by ZstdCompressIfSmaller whose content size is
// `size` into out[0..size).  Returns false on a corrupt frame.
bool ZstdDecompress(std::string_view frame, char* out, size_t size);

}  // namespace ephpm

#endif  // EPHPM_CORE_COMPRESSION_H_
