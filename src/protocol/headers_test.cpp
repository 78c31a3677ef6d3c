#include "protocol/headers.h"

#include <gtest/gtest.h>

namespace oxbow::protocol {

TEST(Headers, RequestHeaderV1) {
  // Metadata v1: key 3, version 1, correlation 7, client id "c"
  std::vector<uint8_t> in{0, 3, 0, 1, 0, 0, 0, 7, 0, 1, 'c', 0xee};
  Reader r(in);
  auto h = decode_request_header(r);
  EXPECT_EQ(h.api_key, 3);
  EXPECT_EQ(h.api_version, 1);
  EXPECT_EQ(h.correlation_id, 7);
  EXPECT_EQ(h.client_id, "c");
  EXPECT_EQ(r.remaining(), 1u);
}

TEST(Headers, RequestHeaderV2SkipsTaggedFields) {
  // Metadata v9 is flexible: header v2 keeps the int16 client id length, then tagged fields.
  std::vector<uint8_t> in{0, 3, 0, 9, 0, 0, 0, 1, 0xff, 0xff, 0x01, 0x00, 0x01, 0x42, 0xee};
  Reader r(in);
  auto h = decode_request_header(r);
  EXPECT_FALSE(h.client_id.has_value());
  EXPECT_EQ(r.remaining(), 1u);
}

TEST(Headers, ApiVersionsResponseHeaderIsAlwaysV0) {
  RequestHeader h{18, 3, 42, "x"};
  Writer w;
  encode_response_header(w, h);
  EXPECT_EQ(w.buffer(), (std::vector<uint8_t>{0, 0, 0, 42}));
  RequestHeader m{3, 9, 42, "x"};
  Writer w2;
  encode_response_header(w2, m);
  EXPECT_EQ(w2.buffer(), (std::vector<uint8_t>{0, 0, 0, 42, 0}));
}

TEST(Headers, VersionTable) {
  EXPECT_TRUE(version_supported(0, 0));  // Produce v0 must be advertised for compression
  EXPECT_TRUE(version_supported(0, 9));
  EXPECT_FALSE(version_supported(0, 10));
  EXPECT_FALSE(version_supported(9999, 0));
  EXPECT_TRUE(is_flexible(1, 12));
  EXPECT_FALSE(is_flexible(1, 11));
}

TEST(Headers, ThrottleTimePositionFollowsEachResponseLayout) {
  // Produce has throttle_time_ms last: v9+ ends with one byte of tagged fields after it.
  EXPECT_EQ(throttle_time_position(0, 9, 4, 40), std::optional<size_t>(35));
  EXPECT_EQ(throttle_time_position(0, 1, 4, 40), std::optional<size_t>(36));
  EXPECT_EQ(throttle_time_position(0, 0, 4, 40), std::nullopt);  // v0 has none
  // Metadata has it first from v3, right at the start of the body.
  EXPECT_EQ(throttle_time_position(3, 3, 8, 40), std::optional<size_t>(8));
  EXPECT_EQ(throttle_time_position(3, 2, 8, 40), std::nullopt);
  // A response too short to hold it is never patched.
  EXPECT_EQ(throttle_time_position(3, 3, 8, 10), std::nullopt);
}

}  // namespace oxbow::protocol
