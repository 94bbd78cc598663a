// The cluster's data plane format: length-prefixed, versioned frames over
// TCP.
//
//   u32 length of what follows | u8 version | u8 type | u64 request id | body
//
// Integers are little endian; strings are a u32 length and the bytes.  A
// frame of another version, or one that does not parse, closes the
// connection (a node of a newer version must keep speaking this one).

#ifndef EPHPM_CLUSTER_WIRE_H_
#define EPHPM_CLUSTER_WIRE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ephpm/types.h"

namespace ephpm {
namespace cluster {

inline constexpr uint8_t kWireVersion = 1;
inline constexpr size_t kFrameHeader = 4 + 1 + 1 + 8;
inline constexpr uint32_t kMaxFrame = 1u << 30;  // a value up to 512 MiB fits

enum class MsgType : uint8_t {
  kPing = 1,        // SWIM probe: sender, gossip
  kAck = 2,         // answer to a ping (also forwarded for a ping-req)
  kPingReq = 3,     // "probe this member for me": target id and address
  kJoin = 4,        // every member the sender knows; answered with kMembers
  kMembers = 5,     // every member this node knows
  kReplicate = 6,   // mutations, one way
  kSyncRequest = 7, // "send me your whole state"
  kSyncBatch = 8,   // part of a state (mutations); a flag marks the last one
  kRouteRequest = 9,   // a lock decision for the key's owner (with the caller's deadline)
  kRouteReply = 10,    // its outcome, or a refusal
  kDecision = 11,      // an owner's decision, to be confirmed by every alive member
  kDecisionReply = 12, // the member's verdict and its record of the decider
  kSyncDone = 13,      // "I applied the whole state you sent me (epoch)"
  kDecisionBatch = 14,       // several kDecision bodies for one member, judged in order
  kDecisionBatchReply = 15,  // the member's record of the decider and one verdict each
  kRouteBatch = 16,          // several kRouteRequest bodies for one owner, decided in order
  kRouteBatchReply = 17,     // one status and outcome each, in the order asked
};

enum class MemberState : uint8_t { kAlive = 0, kSuspect = 1, kDead = 2 };

const char* MemberStateName(MemberState s);

struct MemberRecord {
  std::string id;
  std::string address;  // "host:port" of its data plane
  uint64_t incarnation = 0;
  MemberState state = MemberState::kAlive;
};

// A mutation's flags byte (Writer::Mut): any other bit is malformed.
inline constexpr uint8_t kMutPinned = 1;
inline constexpr uint8_t kMutEphemeral = 2;
inline constexpr uint8_t kMutFenced = 4;  // a u64 fence (never 0) follows the flags

// The wire's little-endian integers, written to out[0..3] and out[0..7].
inline void EncodeU32(uint32_t v, char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
inline void EncodeU64(uint64_t v, char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Appends the encoding of values to a frame body.
class Writer {
 public:
  // Room for a typical frame body (a route request, a decision, a reply)
  // at once: grown from libstdc++'s 15 bytes, one took three allocations.
  static constexpr size_t kTypicalBody = 120;
  Writer() = default;
  explicit Writer(size_t reserve) { out_.reserve(reserve); }
  // Writes into `buffer` (emptied first), whose room a caller keeps from one
  // frame to the next: take it back with std::move(out()).
  explicit Writer(std::string&& buffer) : out_(std::move(buffer)) { out_.clear(); }
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v);
  void U64(uint64_t v);
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void Str(std::string_view s);
  void Member(const MemberRecord& m);
  void Mut(const Mutation& m);
  std::string& out() { return out_; }

 private:
  std::string out_;
};

// Reads a frame body; every read fails (returns false) past the end.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U8(uint8_t* v);
  bool U32(uint32_t* v);
  bool U64(uint64_t* v);
  bool I64(int64_t* v);
  bool Str(std::string_view* s);
  bool Member(MemberRecord* m);
  // The views in *m point into the frame.
  bool Mut(Mutation* m);
  bool Skip(size_t n) {
    if (in_.size() < n) return false;
    in_.remove_prefix(n);
    return true;
  }
  bool done() const { return in_.empty(); }
  size_t remaining() const { return in_.size(); }

 private:
  std::string_view in_;
};

// A whole frame: header then body.
std::string Frame(MsgType type, uint64_t request_id, std::string_view body,
                  std::string_view tail = {});

// Parses a header from 14 bytes: the body's length, version, type, request id.
struct Header {
  uint32_t body_length;
  uint8_t version;
  MsgType type;
  uint64_t request_id;
};
Header ParseHeader(const char* p);

}  // namespace cluster
}  // namespace ephpm

#endif  // EPHPM_CLUSTER_WIRE_H_
