// Replaced by the protobuf schema code.
namespace oxbow::registry::protobuf {}
