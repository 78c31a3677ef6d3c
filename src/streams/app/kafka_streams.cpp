#include "oxbow/streams/kafka_streams.h"

#include "streams/app/kafka_streams_impl.h"

namespace oxbow::streams {

const char* to_string(KafkaStreams::State state) {
  switch (state) {
    case KafkaStreams::State::CREATED:
      return "CREATED";
    case KafkaStreams::State::REBALANCING:
      return "REBALANCING";
    case KafkaStreams::State::RUNNING:
      return "RUNNING";
    case KafkaStreams::State::PENDING_SHUTDOWN:
      return "PENDING_SHUTDOWN";
    case KafkaStreams::State::NOT_RUNNING:
      return "NOT_RUNNING";
    case KafkaStreams::State::PENDING_ERROR:
      return "PENDING_ERROR";
    case KafkaStreams::State::ERROR:
      return "ERROR";
  }
  return "?";
}

KafkaStreams::KafkaStreams(const Topology& topology, std::map<std::string, std::string> config)
    : impl_(std::make_unique<Impl>(&topology, std::move(config))) {}
KafkaStreams::KafkaStreams(std::map<std::string, std::string> config)
    : impl_(std::make_unique<Impl>(nullptr, std::move(config))) {}
void KafkaStreams::removeNamedTopology(const std::string& name, bool resetOffsets) {
  impl_->remove_named_topology(name, resetOffsets);
}
void KafkaStreams::addNamedTopology(const std::string& name, const Topology& topology,
                                    const std::string& internalTopicPrefix) {
  impl_->add_named_topology(name, topology, internalTopicPrefix);
}
const Topology* KafkaStreams::getTopologyByName(const std::string& name) const {
  return impl_->topology_by_name(name);
}
std::shared_ptr<const detail::StoreAccess> KafkaStreams::store_access(
    const std::string& topology, const std::string& name, detail::StoreKind kind, bool timestamped,
    std::optional<int32_t> partition, bool stale, const std::type_info& key_type,
    const std::type_info& value_type) const {
  return impl_->store_access(topology, name, kind, timestamped, partition, stale, key_type,
                             value_type);
}
KafkaStreams::~KafkaStreams() = default;
std::vector<StreamsMetadata> KafkaStreams::metadataForAllStreamsClients() const {
  return impl_->metadata_for_all();
}
std::vector<StreamsMetadata> KafkaStreams::streamsMetadataForStore(
    const std::string& storeName) const {
  return impl_->metadata_for_store(storeName);
}
std::optional<KeyQueryMetadata> KafkaStreams::query_metadata_for_key(
    const std::string& store,
    const std::function<std::string(std::string_view topic)>& serialize_key) const {
  return impl_->metadata_for_key(store, serialize_key);
}
std::map<std::string, std::map<int32_t, LagInfo>> KafkaStreams::allLocalStorePartitionLags() const {
  return impl_->local_lags();
}
void KafkaStreams::start() {
  impl_->start();
}
bool KafkaStreams::close(std::chrono::milliseconds timeout) {
  return impl_->close(timeout);
}
KafkaStreams::State KafkaStreams::state() const {
  return impl_->state();
}
void KafkaStreams::setStateListener(StateListener l) {
  impl_->set_listener(std::move(l));
}
void KafkaStreams::setUncaughtExceptionHandler(UncaughtExceptionHandler h) {
  impl_->set_handler(std::move(h));
}
void KafkaStreams::setProductionExceptionHandler(ProductionExceptionHandler h) {
  impl_->set_production_handler(std::move(h));
}
void KafkaStreams::setProcessingExceptionHandler(ProcessingExceptionHandler h) {
  impl_->set_processing_handler(std::move(h));
}
void KafkaStreams::cleanUp() {
  impl_->clean_up();
}
std::optional<std::string> KafkaStreams::addStreamThread() {
  return impl_->add_stream_thread();
}
std::optional<std::string> KafkaStreams::removeStreamThread(std::chrono::milliseconds timeout) {
  return impl_->remove_stream_thread(timeout);
}

}  // namespace oxbow::streams
