// A windowed source's keys: Streams' windowed key bytes (windows.h) around the key format, read
// into and written from a row that ends with the window's bounds. Apart from row_serde.cpp so
// that the value formats' fuzzer, which builds the serde sources without Streams' library, need
// not link it.
#include <cstddef>

#include "oxbow/streams/windows.h"
#include "sql/serde/row_serde.h"

namespace oxbow::sql {

streams::Serde<Row> source_key_serde(const DataSource& source) {
  std::vector<Column> columns = key_columns(source);
  const size_t n = columns.size();
  auto inner = row_serde(source.formats, std::move(columns), true);
  if (!source.window) return inner;
  auto windowed = source.window->type == SourceWindowType::kSession
                      ? streams::serdes::SessionWindowed(inner)
                      : streams::serdes::TimeWindowed(inner, source.window->size_ms.value_or(0));
  auto serialize = [windowed, n](std::string_view topic, const Row& row) {
    if (row.size() < n + 2)
      throw streams::SerializationException("A windowed key without its window");
    streams::Windowed<Row> key{Row(row.begin(), row.begin() + static_cast<ptrdiff_t>(n)),
                               {row[n].bigint(), row[n + 1].bigint()}};
    return windowed.serialize(topic, key);
  };
  auto deserialize = [windowed, n](std::string_view topic, std::string_view bytes) {
    streams::Windowed<Row> key = windowed.deserialize(topic, bytes);
    Row row = std::move(key.key);
    row.resize(n + 2);
    row[n].set_bigint(key.window.start);
    row[n + 1].set_bigint(key.window.end);
    return row;
  };
  return streams::Serde<Row>(serialize, deserialize, windowed.name);
}

}  // namespace oxbow::sql
