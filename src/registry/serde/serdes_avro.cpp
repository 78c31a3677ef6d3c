// AVRO in the serdes: the datum's Avro binary encoding; the schema "bytes" as the raw bytes.
#include <optional>
#include <type_traits>

#include "registry/avro/binary.h"
#include "registry/avro/schema.h"
#include "registry/serde/serde_formats.h"

namespace oxbow::registry::serde_detail {

namespace {

class AvroCodec final : public Codec {
 public:
  AvroCodec(std::vector<std::unique_ptr<avro::Schema>> references, avro::Schema schema)
      : references_(std::move(references)), schema_(std::move(schema)) {}

  std::string record_name() const override {
    const auto& root = schema_.root();
    return root.kind == avro::Kind::kRecord ? root.full_name : std::string();
  }

  void encode(const Json& value, std::string& out) const override {
    try {
      if (is_bytes())
        out += raw_bytes(value);
      else
        avro::encode(schema_.root(), value, out);
    } catch (const avro::BinaryError& e) {
      throw SerdeError(e.what());
    }
  }

  Json decode(std::string_view payload, const Codec* reader) const override {
    return read<Json>(payload, reader);
  }
  OJson decode_ordered(std::string_view payload, const Codec* reader) const override {
    return read<OJson>(payload, reader);
  }

 private:
  bool is_bytes() const { return schema_.root().kind == avro::Kind::kBytes; }

  // Confluent writes a "bytes" schema's value as the raw bytes, without Avro's length prefix.
  std::string raw_bytes(const Json& value) const {
    std::string encoded = avro::encode(schema_, value);
    size_t prefix = 0;
    while (prefix < encoded.size() && (static_cast<unsigned char>(encoded[prefix]) & 0x80))
      ++prefix;
    return encoded.substr(prefix + 1);
  }

  template <class J>
  static J raw_bytes_json(std::string_view bytes) {
    // Encoding the length first lets the Avro decoder turn bytes into code points.
    std::string framed;
    int64_t n = static_cast<int64_t>(bytes.size());
    uint64_t z = static_cast<uint64_t>(n) << 1;
    while (z >= 0x80) {
      framed += static_cast<char>((z & 0x7F) | 0x80);
      z >>= 7;
    }
    framed += static_cast<char>(z);
    framed += bytes;
    static const avro::Schema schema = std::move(*avro::parse(R"("bytes")").schema);
    if constexpr (std::is_same_v<J, OJson>)
      return avro::decode_ordered(schema, framed);
    else
      return avro::decode(schema, framed);
  }

  template <class J>
  J read(std::string_view payload, const Codec* reader_codec) const {
    const auto* reader = dynamic_cast<const AvroCodec*>(reader_codec);
    try {
      if (is_bytes()) return raw_bytes_json<J>(payload);
      if constexpr (std::is_same_v<J, OJson>)
        return reader ? avro::decode_ordered(schema_, reader->schema_, payload)
                      : avro::decode_ordered(schema_, payload);
      else
        return reader ? avro::decode(schema_, reader->schema_, payload)
                      : avro::decode(schema_, payload);
    } catch (const avro::BinaryError& e) {
      throw SerdeError(e.what());
    }
  }

  std::vector<std::unique_ptr<avro::Schema>> references_;  // kept alive for schema_
  avro::Schema schema_;
};

}  // namespace

std::shared_ptr<const Codec> make_avro_codec(SchemaRegistryClient* client, const SchemaInfo& info) {
  if (info.type != "AVRO") throw SerdeError("the schema is " + info.type + ", not AVRO");
  std::vector<std::unique_ptr<avro::Schema>> references;
  for (const auto& ref : fetch_references(client, info.references)) {
    if (ref.info.type != "AVRO")
      throw SerdeError("referenced schema " + ref.name + " is " + ref.info.type + ", not AVRO");
    avro::ParseOptions options;
    for (const auto& known : references) options.known.push_back(known.get());
    options.validate_defaults = false;
    auto result = avro::parse(ref.info.schema, options);
    if (!result)
      throw SerdeError("referenced schema " + ref.name + " does not parse: " + result.error);
    references.push_back(std::make_unique<avro::Schema>(std::move(*result.schema)));
  }
  avro::ParseOptions options;
  for (const auto& known : references) options.known.push_back(known.get());
  options.validate_defaults = false;  // the registry decides what it accepts
  auto result = avro::parse(info.schema, options);
  if (!result) throw SerdeError("Invalid Avro schema: " + result.error);
  return std::make_shared<AvroCodec>(std::move(references), std::move(*result.schema));
}

}  // namespace oxbow::registry::serde_detail
