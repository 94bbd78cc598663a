#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "ephpm/host_port.h"
#include "ephpm/number_text.h"

using ephpm::ParseInt64;

TEST_CASE("ParseInt64 accepts canonical int64 text only", "[int]") {
  int64_t v = 7;
  CHECK((ParseInt64("0", &v) && v == 0));
  CHECK((ParseInt64("42", &v) && v == 42));
  CHECK((ParseInt64("-42", &v) && v == -42));
  CHECK((ParseInt64("9223372036854775807", &v) && v == INT64_MAX));
  CHECK((ParseInt64("-9223372036854775808", &v) && v == INT64_MIN));
  v = 7;
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "01", "-0", "00", "1.0", "1e3", "abc",
                          "9223372036854775808", "-9223372036854775809",
                          "99999999999999999999", "123456789012345678901"}) {
    INFO(bad);
    CHECK_FALSE(ParseInt64(bad, &v));
  }
  CHECK(v == 7);  // untouched on failure
}

#include "ephpm/settings.h"

TEST_CASE("byte sizes with K, M and G suffixes", "[settings]") {
  uint64_t b = 0;
  CHECK((ephpm::ParseByteSize("0", &b) && b == 0));
  CHECK((ephpm::ParseByteSize("1024", &b) && b == 1024));
  CHECK((ephpm::ParseByteSize("64k", &b) && b == 64 * 1024));
  CHECK((ephpm::ParseByteSize("512M", &b) && b == 512ull << 20));
  CHECK((ephpm::ParseByteSize("2G", &b) && b == 2ull << 30));
  for (const char* bad : {"", "M", "-1", "-1M", "1.5M", " 1", "1 ", "1T", "1MB", "abc",
                          "9999999999G"}) {
    INFO(bad);
    CHECK_FALSE(ephpm::ParseByteSize(bad, &b));
  }
}

TEST_CASE("host:port is split at the last colon, IPv6 in brackets", "[settings]") {
  std::string host = "unchanged";
  uint16_t port = 7;
  CHECK((ephpm::SplitHostPort("127.0.0.1:6380", &host, &port) && host == "127.0.0.1" &&
         port == 6380));
  CHECK((ephpm::SplitHostPort("[::1]:0", &host, &port) && host == "::1" && port == 0));
  CHECK((ephpm::SplitHostPort("node-a:65535", &host, &port) && host == "node-a" &&
         port == 65535));
  host = "unchanged";
  port = 7;
  for (const char* bad : {"", ":6380", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
                          "127.0.0.1:-1", "127.0.0.1:80x", "127.0.0.1: 80"}) {
    INFO(bad);
    CHECK_FALSE(ephpm::SplitHostPort(bad, &host, &port));
  }
  CHECK((host == "unchanged" && port == 7));  // untouched on failure
}

TEST_CASE("EqualsIgnoreCase compares ASCII letters without case, nothing else", "[settings]") {
  CHECK(ephpm::EqualsIgnoreCase("Content-Type", "content-type"));
  CHECK(ephpm::EqualsIgnoreCase("", ""));
  CHECK_FALSE(ephpm::EqualsIgnoreCase("NX", "NXX"));
  CHECK_FALSE(ephpm::EqualsIgnoreCase("a-b", "a_b"));
  CHECK_FALSE(ephpm::EqualsIgnoreCase(std::string_view("NX\0", 3), "nx"));
}

TEST_CASE("store settings are applied or refused with a message", "[settings]") {
  ephpm::StoreOptions o;
  CHECK(ephpm::ApplySetting("memory_limit", "64M", &o).empty());
  CHECK(o.memory_limit == 64ull << 20);
  CHECK(ephpm::ApplySetting("eviction_policy", "allkeys-lru", &o).empty());
  CHECK(o.eviction == ephpm::EvictionPolicy::kAllKeysLru);
  CHECK(ephpm::ApplySetting("compression", "zstd", &o).empty());
  CHECK(ephpm::ApplySetting("compression_threshold", "2k", &o).empty());
  CHECK(o.compression_threshold == 2048);
  CHECK(ephpm::ApplySetting("compression_level", "-3", &o).empty());
  CHECK(o.compression_level == -3);
  CHECK(ephpm::ApplySetting("max_value_size", "2G", &o).empty());
  CHECK(o.max_value_size == ephpm::kMaxValueSizeLimit);
  CHECK(ephpm::ApplySetting("max_value_size", "1M", &o).empty());
  CHECK(ephpm::ApplySetting("shards", "256", &o).empty());
  CHECK(o.shards == 256);

  const ephpm::StoreOptions before = o;
  CHECK(ephpm::ApplySetting("shards", "48", &o).find("power of two") != std::string::npos);
  CHECK(ephpm::ApplySetting("shards", "0", &o) != "");
  CHECK(ephpm::ApplySetting("memory_limit", "lots", &o) != "");
  CHECK(ephpm::ApplySetting("eviction_policy", "volatile-lru", &o) != "");
  CHECK(ephpm::ApplySetting("compression", "gzip", &o) != "");
  CHECK(ephpm::ApplySetting("compression_level", "23", &o) != "");
  CHECK(ephpm::ApplySetting("max_value_size", "0", &o) != "");
  // An entry keeps a string's length in 32 bits: 2G is the most accepted.
  CHECK(ephpm::ApplySetting("max_value_size", "2049M", &o).find("at most 2G") !=
        std::string::npos);
  CHECK(ephpm::ApplySetting("max_value_size", "4G", &o) != "");
  CHECK(ephpm::ApplySetting("nonsense", "1", &o) == "is not a store setting");
  CHECK(o.shards == before.shards);
  CHECK(o.memory_limit == before.memory_limit);
  CHECK(o.eviction == before.eviction);
}
