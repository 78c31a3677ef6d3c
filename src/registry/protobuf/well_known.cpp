// The imports Confluent resolves with no reference (docs/registry/confluent-json-protobuf.md §2.4).
// The google/protobuf files come from libprotobuf's generated pool; the others are written here
// from their published field lists (googleapis' google/type, Confluent's protobuf-types), since no
// library on this machine carries them.
#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <mutex>

#include "registry/protobuf/schema_data.h"

namespace oxbow::registry::protobuf {

namespace {

struct Text {
  const char* name;
  const char* text;
};

// Only what a schema can refer to: the types, fields and numbers. Comments and language options
// are left out, as they change neither resolution nor the wire.
constexpr Text kTexts[] = {
    {"confluent/meta.proto", R"(syntax = "proto3";
package confluent;
import "google/protobuf/descriptor.proto";
message Meta {
  string doc = 1;
  map<string, string> params = 2;
  repeated string tags = 3;
}
extend google.protobuf.FileOptions { Meta file_meta = 1088; }
extend google.protobuf.MessageOptions { Meta message_meta = 1088; }
extend google.protobuf.FieldOptions { Meta field_meta = 1088; }
extend google.protobuf.EnumOptions { Meta enum_meta = 1088; }
extend google.protobuf.EnumValueOptions { Meta enum_value_meta = 1088; }
)"},
    {"confluent/type/decimal.proto", R"(syntax = "proto3";
package confluent.type;
message Decimal {
  bytes value = 1;
  uint32 precision = 2;
  int32 scale = 3;
}
)"},
    {"google/type/calendar_period.proto", R"(syntax = "proto3";
package google.type;
enum CalendarPeriod {
  CALENDAR_PERIOD_UNSPECIFIED = 0;
  DAY = 1;
  WEEK = 2;
  FORTNIGHT = 3;
  MONTH = 4;
  QUARTER = 5;
  HALF = 6;
  YEAR = 7;
}
)"},
    {"google/type/color.proto", R"(syntax = "proto3";
package google.type;
import "google/protobuf/wrappers.proto";
message Color {
  float red = 1;
  float green = 2;
  float blue = 3;
  google.protobuf.FloatValue alpha = 4;
}
)"},
    {"google/type/date.proto", R"(syntax = "proto3";
package google.type;
message Date {
  int32 year = 1;
  int32 month = 2;
  int32 day = 3;
}
)"},
    {"google/type/datetime.proto", R"(syntax = "proto3";
package google.type;
import "google/protobuf/duration.proto";
message DateTime {
  int32 year = 1;
  int32 month = 2;
  int32 day = 3;
  int32 hours = 4;
  int32 minutes = 5;
  int32 seconds = 6;
  int32 nanos = 7;
  oneof time_offset {
    google.protobuf.Duration utc_offset = 8;
    TimeZone time_zone = 9;
  }
}
message TimeZone {
  string id = 1;
  string version = 2;
}
)"},
    {"google/type/dayofweek.proto", R"(syntax = "proto3";
package google.type;
enum DayOfWeek {
  DAY_OF_WEEK_UNSPECIFIED = 0;
  MONDAY = 1;
  TUESDAY = 2;
  WEDNESDAY = 3;
  THURSDAY = 4;
  FRIDAY = 5;
  SATURDAY = 6;
  SUNDAY = 7;
}
)"},
    {"google/type/decimal.proto", R"(syntax = "proto3";
package google.type;
message Decimal {
  string value = 1;
}
)"},
    {"google/type/expr.proto", R"(syntax = "proto3";
package google.type;
message Expr {
  string expression = 1;
  string title = 2;
  string description = 3;
  string location = 4;
}
)"},
    {"google/type/fraction.proto", R"(syntax = "proto3";
package google.type;
message Fraction {
  int64 numerator = 1;
  int64 denominator = 2;
}
)"},
    {"google/type/interval.proto", R"(syntax = "proto3";
package google.type;
import "google/protobuf/timestamp.proto";
message Interval {
  google.protobuf.Timestamp start_time = 1;
  google.protobuf.Timestamp end_time = 2;
}
)"},
    {"google/type/latlng.proto", R"(syntax = "proto3";
package google.type;
message LatLng {
  double latitude = 1;
  double longitude = 2;
}
)"},
    {"google/type/money.proto", R"(syntax = "proto3";
package google.type;
message Money {
  string currency_code = 1;
  int64 units = 2;
  int32 nanos = 3;
}
)"},
    {"google/type/month.proto", R"(syntax = "proto3";
package google.type;
enum Month {
  MONTH_UNSPECIFIED = 0;
  JANUARY = 1;
  FEBRUARY = 2;
  MARCH = 3;
  APRIL = 4;
  MAY = 5;
  JUNE = 6;
  JULY = 7;
  AUGUST = 8;
  SEPTEMBER = 9;
  OCTOBER = 10;
  NOVEMBER = 11;
  DECEMBER = 12;
}
)"},
    {"google/type/phone_number.proto", R"(syntax = "proto3";
package google.type;
message PhoneNumber {
  message ShortCode {
    string region_code = 1;
    string number = 2;
  }
  oneof kind {
    string e164_number = 1;
    ShortCode short_code = 2;
  }
  string extension = 3;
}
)"},
    {"google/type/postal_address.proto", R"(syntax = "proto3";
package google.type;
message PostalAddress {
  int32 revision = 1;
  string region_code = 2;
  string language_code = 3;
  string postal_code = 4;
  string sorting_code = 5;
  string administrative_area = 6;
  string locality = 7;
  string sublocality = 8;
  repeated string address_lines = 9;
  repeated string recipients = 10;
  string organization = 11;
}
)"},
    {"google/type/quaternion.proto", R"(syntax = "proto3";
package google.type;
message Quaternion {
  double x = 1;
  double y = 2;
  double z = 3;
  double w = 4;
}
)"},
    {"google/type/timeofday.proto", R"(syntax = "proto3";
package google.type;
message TimeOfDay {
  int32 hours = 1;
  int32 minutes = 2;
  int32 seconds = 3;
  int32 nanos = 4;
}
)"},
};

constexpr const char* kGoogleProtobuf[] = {
    "any",    "api",       "descriptor", "duration", "empty", "field_mask", "source_context",
    "struct", "timestamp", "type",       "wrappers",
};

struct Quiet : pb::io::ErrorCollector {
  void AddError(int, int, const std::string&) override {}
};

std::map<std::string, FileSource> load() {
  std::map<std::string, FileSource> out;
  for (const char* base : kGoogleProtobuf) {
    std::string name = std::string("google/protobuf/") + base + ".proto";
    const pb::FileDescriptor* f = pb::DescriptorPool::generated_pool()->FindFileByName(name);
    if (f == nullptr) continue;
    FileSource& s = out[name];
    f->CopyTo(&s.proto);
    s.from_text = false;
  }
  for (const Text& t : kTexts) {
    std::string_view text = t.text;
    pb::io::ArrayInputStream in(text.data(), static_cast<int>(text.size()));
    Quiet quiet;
    pb::io::Tokenizer tokenizer(&in, &quiet);
    pb::compiler::Parser parser;
    FileSource& s = out[t.name];
    parser.RecordErrorsTo(&quiet);
    parser.Parse(&tokenizer, &s.proto);  // fixed texts, checked by the tests
    s.proto.set_name(t.name);
    s.proto.clear_source_code_info();
  }
  return out;
}

}  // namespace

const FileSource* builtin_file(const std::string& name) {
  static const std::map<std::string, FileSource> files = load();
  auto it = files.find(name);
  return it == files.end() ? nullptr : &it->second;
}

}  // namespace oxbow::registry::protobuf
