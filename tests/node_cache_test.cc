// The key map's allocator (core/shard.h NodeAllocator): the node a map
// frees is kept in its shard's NodeCache and is the next node it makes;
// nothing but a node goes there, and a map keeps its own cache through a
// swap and a move.

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "shard.h"

using ephpm::Entry;
using ephpm::HashKey;
using ephpm::Key;
using ephpm::Map;
using ephpm::MapNode;
using ephpm::NodeAllocator;
using ephpm::NodeCache;

namespace {

Map MapWith(NodeCache* cache) { return Map(0, ephpm::KeyHash(), ephpm::KeyEq(), Map::allocator_type(cache)); }

const void* NodeOf(Map& m, const std::string& key) { return &*m.find(HashKey(key)); }

}  // namespace

TEST_CASE("a freed node waits in the cache and is the next node made", "[nodecache]") {
  NodeCache cache;
  Map m = MapWith(&cache);
  m.try_emplace(Key("a"));
  m.try_emplace(Key("b"));
  const void* a = NodeOf(m, "a");
  const void* b = NodeOf(m, "b");
  REQUIRE(cache.node == nullptr);

  m.erase(m.find(HashKey("a")));
  CHECK(cache.node == a);
  // The cache holds one node: the second goes back to the allocator.
  m.erase(m.find(HashKey("b")));
  CHECK(cache.node == a);

  m.try_emplace(Key("c"), Entry());
  CHECK(NodeOf(m, "c") == a);
  CHECK(cache.node == nullptr);
  m.try_emplace(Key("d"));
  CHECK(NodeOf(m, "d") != a);
  (void)b;
}

TEST_CASE("a map whose nodes come and go keeps its contents", "[nodecache]") {
  // Random inserts, overwrites and erases against std::set, through growth
  // and shrinking of the table: the cached node must never be live.
  NodeCache cache;
  std::set<std::string> model;
  std::mt19937 rng(20261204);
  {
    Map m = MapWith(&cache);
    for (int i = 0; i < 50000; ++i) {
      const std::string key = "k" + std::to_string(rng() % 300);
      if (rng() % 3 == 0) {
        auto it = m.find(HashKey(key));
        CHECK((it != m.end()) == (model.count(key) == 1));
        if (it != m.end()) m.erase(it);
        model.erase(key);
      } else {
        auto [it, inserted] = m.try_emplace(Key(key));
        CHECK(inserted == (model.count(key) == 0));
        it->second.value = ephpm::ValueBuf("value of " + key);
        model.insert(key);
      }
      if (cache.node != nullptr) {
        for (const auto& kv : m) REQUIRE(static_cast<const void*>(&kv) != cache.node);
      }
    }
    REQUIRE(m.size() == model.size());
    for (const auto& key : model) {
      auto it = m.find(HashKey(key));
      REQUIRE(it != m.end());
      CHECK(it->second.value.view() == "value of " + key);
    }
  }
  // The map is gone; the cache still holds a node, freed with it.
  CHECK(cache.node != nullptr);
}

TEST_CASE("only a node goes to the cache, never a table's array", "[nodecache]") {
  NodeCache cache;
  NodeAllocator<MapNode, MapNode> nodes(&cache);
  MapNode* n = nodes.allocate(1);
  nodes.deallocate(n, 1);
  REQUIRE(cache.node == n);

  // Rebound to another type (what the table's arrays use), one element
  // neither takes the cached node nor is kept.
  NodeAllocator<uint64_t, MapNode> words(nodes);
  CHECK(words.cache == &cache);
  uint64_t* w = words.allocate(1);
  CHECK(static_cast<void*>(w) != cache.node);
  words.deallocate(w, 1);
  CHECK(cache.node == n);

  // Nor does more than one node.
  MapNode* two = nodes.allocate(2);
  CHECK(static_cast<void*>(two) != cache.node);
  nodes.deallocate(two, 2);
  CHECK(cache.node == n);

  CHECK(nodes.allocate(1) == n);
  CHECK(cache.node == nullptr);
  nodes.deallocate(n, 1);
}

TEST_CASE("a map keeps its own cache through swap and move", "[nodecache]") {
  NodeCache ca, cb;
  Map a = MapWith(&ca);
  Map b = MapWith(&cb);
  a.try_emplace(Key("in a"));
  b.try_emplace(Key("in b"));

  // SWAPDB swaps two shards' maps: each keeps its shard's cache, or a
  // shard would free into the other's cache under its own lock only.
  a.swap(b);
  CHECK(a.get_allocator().cache == &ca);
  CHECK(b.get_allocator().cache == &cb);
  CHECK(a.count(HashKey("in b")) == 1);

  // A flush swaps with an empty map, which then frees the nodes: not into
  // the shard's cache (nor does the empty map take it).
  Map().swap(a);
  CHECK(a.get_allocator().cache == &ca);
  CHECK(a.empty());
  CHECK(ca.node == nullptr);

  b = Map();
  CHECK(b.get_allocator().cache == &cb);
}
