// The plugin interface's shared behaviour: offsets read one partition at a time by default, and
// the transaction.boundary words.
#include <algorithm>
#include <cctype>

#include "oxbow/connect/errors.h"
#include "oxbow/connect/source.h"

namespace oxbow::connect {

std::vector<std::pair<ValueMap, ValueMap>> OffsetStorageReader::offsets(
    const std::vector<ValueMap>& partitions) {
  std::vector<std::pair<ValueMap, ValueMap>> found;
  for (const ValueMap& partition : partitions) {
    if (std::optional<ValueMap> offset = this->offset(partition)) {
      found.emplace_back(partition, std::move(*offset));
    }
  }
  return found;
}

SourceTask::TransactionBoundary SourceTask::transactionBoundaryFromProperty(
    std::string_view property) {
  std::string upper;
  for (char c : property) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  size_t first = upper.find_first_not_of(" \t\r\n");
  size_t last = upper.find_last_not_of(" \t\r\n");
  upper = first == std::string::npos ? "" : upper.substr(first, last - first + 1);
  for (TransactionBoundary boundary :
       {TransactionBoundary::POLL, TransactionBoundary::INTERVAL, TransactionBoundary::CONNECTOR}) {
    std::string name(toString(boundary));
    std::transform(name.begin(), name.end(), name.begin(), ::toupper);
    if (name == upper) return boundary;
  }
  // Java's Enum.valueOf message.
  throw ConnectException(
      "No enum constant org.apache.kafka.connect.source.SourceTask.TransactionBoundary." + upper);
}

std::string_view SourceTask::toString(TransactionBoundary boundary) {
  switch (boundary) {
    case TransactionBoundary::POLL:
      return "poll";
    case TransactionBoundary::INTERVAL:
      return "interval";
    case TransactionBoundary::CONNECTOR:
      return "connector";
  }
  return "poll";
}

}  // namespace oxbow::connect
