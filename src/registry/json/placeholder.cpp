// Replaced by the json schema code.
namespace oxbow::registry::json {}
