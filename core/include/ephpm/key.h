// The key object of the store's map: the same 32 bytes as a std::string,
// but holding up to 30 bytes inline where libstdc++'s string holds 15.
// Also what a routed request keeps of its key until it is answered
// (RouteAnswer, a cluster decision's record of what it wrote): one
// allocation fewer per routed request for a key of 16 to 30 bytes.
//
// Keys of 16 to 30 bytes are common ("user:1000:profile", redis-benchmark's
// "key:000000012345", session and lock names with a short prefix).  Inline,
// such a key costs no allocation of its own (a 32 B malloc chunk for a 16 B
// key) and a lookup compares it in the map's node, which the lookup has just
// read, instead of following a pointer to a separate buffer: one cache miss
// fewer on every hit.  Longer keys are held on the heap, without a
// terminating NUL (nothing reads a key as a C string).

#ifndef EPHPM_KEY_H_
#define EPHPM_KEY_H_

#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

namespace ephpm {

class alignas(8) Key {
 public:
  // Bytes held in the object itself.
  static constexpr size_t kInline = 30;

  Key() { SetInline(0); }
  explicit Key(std::string_view s) { Init(s); }
  Key(const Key& o) { Init(o.view()); }
  Key(Key&& o) noexcept {
    std::memcpy(buf_, o.buf_, sizeof(buf_));
    o.SetInline(0);
  }
  Key& operator=(const Key& o) {
    if (this != &o) {
      Key copy(o);  // may throw; *this is untouched then
      *this = std::move(copy);
    }
    return *this;
  }
  Key& operator=(Key&& o) noexcept {
    if (this != &o) {
      Free();
      std::memcpy(buf_, o.buf_, sizeof(buf_));
      o.SetInline(0);
    }
    return *this;
  }
  ~Key() { Free(); }

  // Replaces the bytes (s may view this key's own); on bad_alloc (a key
  // past kInline) *this is unchanged.
  void assign(std::string_view s) { *this = Key(s); }

  bool is_inline() const { return Tag() != kHeapTag; }
  size_t size() const {
    if (is_inline()) return Tag();
    size_t n;
    std::memcpy(&n, buf_ + sizeof(char*), sizeof(n));
    return n;
  }
  bool empty() const { return size() == 0; }
  const char* data() const { return is_inline() ? buf_ : HeapPtr(); }
  std::string_view view() const { return std::string_view(data(), size()); }
  operator std::string_view() const { return view(); }  // NOLINT: a key is its bytes
  std::string str() const { return std::string(view()); }

  friend bool operator==(const Key& a, const Key& b) { return a.view() == b.view(); }
  friend bool operator==(const Key& a, std::string_view b) { return a.view() == b; }
  friend bool operator<(const Key& a, const Key& b) { return a.view() < b.view(); }

 private:
  static constexpr uint8_t kHeapTag = 0xFF;

  uint8_t Tag() const { return static_cast<uint8_t>(buf_[sizeof(buf_) - 1]); }
  void SetInline(size_t n) { buf_[sizeof(buf_) - 1] = static_cast<char>(n); }
  char* HeapPtr() const {
    char* p;
    std::memcpy(&p, buf_, sizeof(p));
    return p;
  }

  void Init(std::string_view s) {
    if (s.size() <= kInline) {
      if (!s.empty()) std::memcpy(buf_, s.data(), s.size());
      SetInline(s.size());
      return;
    }
    char* p = static_cast<char*>(::operator new(s.size()));  // may throw bad_alloc
    std::memcpy(p, s.data(), s.size());
    const size_t n = s.size();
    std::memcpy(buf_, &p, sizeof(p));
    std::memcpy(buf_ + sizeof(p), &n, sizeof(n));
    buf_[sizeof(buf_) - 1] = static_cast<char>(kHeapTag);
  }
  void Free() {
    if (!is_inline()) ::operator delete(HeapPtr());
    SetInline(0);
  }

  char buf_[32];
};
static_assert(sizeof(Key) == sizeof(std::string), "the map's node layout counts on it");

}  // namespace ephpm

#endif  // EPHPM_KEY_H_
