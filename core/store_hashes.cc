// The hash family: HSET, HGET, HMGET, HGETALL, HLEN, HEXISTS, HSTRLEN, HDEL,
// HINCRBY and HINCRBYFLOAT.

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ephpm/number_text.h"
#include "store_impl.h"

namespace ephpm {

Status Store::Impl::HSet(std::string_view key,
                         const std::vector<std::pair<std::string_view, std::string_view>>& fields,
                         bool only_if_absent, int64_t* added) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  for (const auto& [f, v] : fields) {
    if (!ValueOk(f) || !ValueOk(v)) return Status::kInvalidArgument;
  }
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(hk, [&](Shard& s, int64_t now, bool* changed,
                                uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    auto it = FindLiveForWriteLocked(s, hk, now, changed);
    if (it != s.map.end() && it->second.type != ValueType::kHash) return Status::kWrongType;
    return HSetLocked(s, it, hk, fields, only_if_absent, now, added, shortfall, changed);
  });
}

template <typename Read>
Status Store::Impl::ReadHash(std::string_view key, Read read) const {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  ReaderLock l(&s.mu);
  auto it = s.map.find(hk);
  if (it == s.map.end() || IsExpired(it->second, NowFor(it->second))) {
    read(static_cast<const HashFields*>(nullptr));
    return Status::kOk;
  }
  if (it->second.type != ValueType::kHash) return Status::kWrongType;
  if (lru()) it->second.last_access.store(clock_->CoarseMs(), std::memory_order_relaxed);
  read(static_cast<const HashFields*>(it->second.hash()));
  return Status::kOk;
}

Status Store::Impl::HGet(std::string_view key, std::string_view field, std::string* value) const {
  bool found = false;
  const Status st = ReadHash(key, [&](const HashFields* h) {
    if (h == nullptr) return;
    auto f = h->find(field);
    if (f == h->end()) return;
    found = true;
    *value = f->second;
  });
  if (st != Status::kOk) return st;
  return found ? Status::kOk : Status::kNotFound;
}

Status Store::Impl::HMGet(std::string_view key, const std::vector<std::string_view>& fields,
                          std::vector<std::optional<std::string>>* values) const {
  values->assign(fields.size(), std::nullopt);
  return ReadHash(key, [&](const HashFields* h) {
    if (h == nullptr) return;
    for (size_t i = 0; i < fields.size(); ++i) {
      auto f = h->find(fields[i]);
      if (f != h->end()) (*values)[i] = f->second;
    }
  });
}

Status Store::Impl::HRandField(std::string_view key, int64_t count,
                              std::vector<std::pair<std::string, std::string>>* out) const {
  out->clear();
  // -count without overflow (RESP refuses INT64_MIN, as Redis does).
  const uint64_t wanted = count < 0 ? static_cast<uint64_t>(-(count + 1)) + 1
                                    : static_cast<uint64_t>(count);
  bool too_many = false;
  const Status st = ReadHash(key, [&](const HashFields* h) {
    if (h == nullptr || wanted == 0) return;
    const size_t size = h->size();
    if (count > 0 && wanted >= size) {
      out->reserve(size);
      for (const auto& [f, v] : *h) out->emplace_back(f, v);
      return;
    }
    if (count < 0 && wanted > out->max_size()) {
      too_many = true;
      return;
    }
    // The fields by position (the node map has no random access).
    std::vector<const HashFields::value_type*> fields;
    fields.reserve(size);
    for (const auto& kv : *h) fields.push_back(&kv);
    const size_t k = static_cast<size_t>(wanted);
    out->reserve(k);
    if (count < 0) {  // drawn independently: repeats allowed
      for (size_t i = 0; i < k; ++i) {
        const auto* kv = fields[RandomBelow(size)];
        out->emplace_back(kv->first, kv->second);
      }
      return;
    }
    // k distinct: the first k of a partial shuffle.
    for (size_t i = 0; i < k; ++i) {
      std::swap(fields[i], fields[i + RandomBelow(size - i)]);
      out->emplace_back(fields[i]->first, fields[i]->second);
    }
  });
  if (st != Status::kOk) return st;
  return too_many ? Status::kOutOfMemory : Status::kOk;
}

Status Store::Impl::HGetAll(std::string_view key,
                            std::vector<std::pair<std::string, std::string>>* fields) const {
  fields->clear();
  return ReadHash(key, [&](const HashFields* h) {
    if (h == nullptr) return;
    fields->reserve(h->size());
    for (const auto& [f, v] : *h) fields->emplace_back(f, v);
  });
}

Status Store::Impl::HLen(std::string_view key, int64_t* count) const {
  return ReadHash(key, [&](const HashFields* h) {
    *count = h == nullptr ? 0 : static_cast<int64_t>(h->size());
  });
}

Status Store::Impl::HExists(std::string_view key, std::string_view field, bool* exists) const {
  return ReadHash(key, [&](const HashFields* h) {
    *exists = h != nullptr && h->find(field) != h->end();
  });
}

Status Store::Impl::HStrLen(std::string_view key, std::string_view field, int64_t* length) const {
  return ReadHash(key, [&](const HashFields* h) {
    *length = 0;
    if (h == nullptr) return;
    auto f = h->find(field);
    if (f != h->end()) *length = static_cast<int64_t>(f->second.size());
  });
}

Status Store::Impl::HDel(std::string_view key, const std::vector<std::string_view>& fields,
                         int64_t* removed) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  *removed = 0;
  return Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (it == s.map.end()) return Status::kOk;
        Entry& e = it->second;
        if (e.type != ValueType::kHash) return Status::kWrongType;
        uint64_t freed = 0;
        for (std::string_view f : fields) {
          auto fi = e.hash()->find(f);
          if (fi == e.hash()->end()) continue;
          freed += FieldMem(fi->first.size(), fi->second.size());
          e.hash()->erase(fi);
          ++*removed;
        }
        if (*removed == 0) return Status::kOk;
        *changed = true;
        if (e.hash()->empty()) {  // the last field takes the key with it
          DeleteLocked(s, it, key);
          return Status::kOk;
        }
        Release(s, e.mem_size - freed, e.mem_size);
        e.mem_size -= freed;
        e.version = ++s.last_version;
        PublishLocked(s, Mutation::Kind::kSet, key, &e);
        return Status::kOk;
      });
}

template <typename Update>
Status Store::Impl::HUpdateField(std::string_view key, std::string_view field, Update update) {
  if (!KeyOk(key) || !ValueOk(field)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(hk, [&](Shard& s, int64_t now, bool* changed,
                                uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    auto it = FindLiveForWriteLocked(s, hk, now, changed);
    if (it != s.map.end() && it->second.type != ValueType::kHash) return Status::kWrongType;
    const std::string* current = nullptr;
    if (it != s.map.end()) {
      auto fi = it->second.hash()->find(field);
      if (fi != it->second.hash()->end()) current = &fi->second;
    }
    std::string next;
    const Status us = update(current, &next);
    if (us != Status::kOk) return us;
    int64_t added = 0;
    const std::vector<std::pair<std::string_view, std::string_view>> one = {{field, next}};
    return HSetLocked(s, it, hk, one, false, now, &added, shortfall, changed);
  });
}

Status Store::Impl::HIncrBy(std::string_view key, std::string_view field, int64_t delta,
                            int64_t* result) {
  return HUpdateField(key, field, [&](const std::string* current, std::string* next) {
    int64_t v = 0;
    if (current != nullptr && !ParseInt64(*current, &v)) return Status::kNotInteger;
    if (__builtin_add_overflow(v, delta, result)) return Status::kOverflow;
    *next = std::to_string(*result);
    return Status::kOk;
  });
}

Status Store::Impl::HIncrByFloat(std::string_view key, std::string_view field, long double delta,
                                 std::string* result) {
  return HUpdateField(key, field, [&](const std::string* current, std::string* next) {
    long double v = 0;
    if (current != nullptr && !ParseLongDouble(*current, &v)) return Status::kNotFloat;
    const long double sum = v + delta;
    if (std::isnan(sum) || std::isinf(sum)) return Status::kNanOrInfinity;
    *next = FormatLongDouble(sum);
    *result = *next;
    return Status::kOk;
  });
}

Status Store::Impl::HSetLocked(
    Shard& s, Map::iterator it, const HashedKey& hk,
    const std::vector<std::pair<std::string_view, std::string_view>>& fields, bool only_if_absent,
    int64_t now, int64_t* added, uint64_t* shortfall, bool* changed) {
  *added = 0;
  const bool exists = it != s.map.end();
  const HashFields* h = exists ? it->second.hash() : nullptr;
  // The last value of a repeated field wins.
  absl::flat_hash_map<std::string_view, std::string_view> want;
  for (const auto& [f, v] : fields) {
    if (only_if_absent && ((h != nullptr && h->contains(f)) || want.contains(f))) continue;
    want[f] = v;
  }
  if (want.empty()) return Status::kOk;
  uint64_t grow = 0, shrink = 0;
  for (const auto& [f, v] : want) {
    const auto fi = h != nullptr ? h->find(f) : HashFields::const_iterator();
    if (h != nullptr && fi != h->end()) {
      const uint64_t was = StringHeapMem(fi->second.size()), will = StringHeapMem(v.size());
      if (will >= was) grow += will - was;
      else shrink += was - will;
    } else {
      grow += FieldMem(f.size(), v.size());
    }
  }
  const uint64_t old_mem = exists ? it->second.mem_size : 0;
  const uint64_t base = exists ? old_mem : HashEntryMem(hk.key.size(), 0, false);
  const uint64_t new_mem = base + grow - shrink;
  // Allocated first: the new values of existing fields, and the new fields
  // as nodes of a map of their own, which `apply` moves into the hash's
  // reserved table (moving a node allocates nothing).
  std::vector<std::pair<std::string_view, std::string>> overwrite;
  HashFields staged;
  std::unique_ptr<HashFields> made;
  const bool installed = Transact(
      s, new_mem, old_mem, false, 0, shortfall,
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        for (const auto& [f, v] : want) {
          if (h != nullptr && h->contains(f)) {
            overwrite.emplace_back(f, std::string(v));
          } else {
            staged.try_emplace(std::string(f), std::string(v));
          }
        }
        if (!exists) {
          made = std::make_unique<HashFields>();
          made->reserve(staged.size());
          it = EmplaceLocked(s, hk);
        } else {
          it->second.hash()->reserve(it->second.hash()->size() + staged.size());
        }
      },
      [] {},
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        Entry& e = it->second;
        if (!exists) {
          e.Hold(std::move(made));
          e.type = ValueType::kHash;
          e.compressed = false;
          e.expires_at = 0;
        }
        for (auto& [f, v] : overwrite) e.hash()->find(f)->second.swap(v);
        // Room reserved: no allocation.
        while (!staged.empty()) {
          e.hash()->insert(staged.extract(staged.begin()));
          ++*added;
        }
        e.mem_size = new_mem;
        e.version = ++s.last_version;
        e.last_access.store(now, std::memory_order_relaxed);
      });
  if (!installed) return Status::kOutOfMemory;
  PublishLocked(s, Mutation::Kind::kSet, hk.key, &it->second);
  *changed = true;
  return Status::kOk;
}

}  // namespace ephpm
