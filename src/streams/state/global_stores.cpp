#include "streams/state/global_stores.h"

#include "streams/state/cursors.h"
#include "streams/state/stores.h"

namespace oxbow::streams::detail {

namespace {

class GuardedStore : public KeyValueStore {
 public:
  explicit GuardedStore(std::unique_ptr<KeyValueStore> inner) : inner_(std::move(inner)) {}
  const std::string& name() const override { return inner_->name(); }
  std::optional<std::string> get(const std::string& key) override {
    std::shared_lock lock(mutex_);
    return inner_->get(key);
  }
  bool get_into(const std::string& key, std::string& out) override {
    std::shared_lock lock(mutex_);
    return inner_->get_into(key, out);
  }
  void put(const std::string& key, const std::optional<std::string>& value,
           const RecordContext& context) override {
    std::unique_lock lock(mutex_);
    inner_->put(key, value, context);
  }
  std::vector<BytesPair> range(const std::string& from, const std::string& to) override {
    std::shared_lock lock(mutex_);
    return inner_->range(from, to);
  }
  std::vector<BytesPair> prefix_scan(const std::string& prefix) override {
    std::shared_lock lock(mutex_);
    return inner_->prefix_scan(prefix);
  }
  std::vector<BytesPair> all() override {
    std::shared_lock lock(mutex_);
    return inner_->all();
  }
  std::unique_ptr<KeyValueCursor> scan(const KeyRange& range) override {
    return locked_batch_cursor(*inner_, mutex_, range);
  }
  std::unique_ptr<KeyValueCursor> query_scan(const KeyRange& range) override {
    return locked_batch_cursor(*inner_, mutex_, range);
  }
  int64_t approximate_num_entries() override {
    std::shared_lock lock(mutex_);
    return inner_->approximate_num_entries();
  }
  void flush() override {}

 private:
  std::shared_mutex mutex_;
  std::unique_ptr<KeyValueStore> inner_;
};

}  // namespace

KeyValueStore& GlobalStores::store(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto& slot = stores_[name];
  if (!slot) slot = std::make_unique<GuardedStore>(make_in_memory_store(name));
  return *slot;
}

KeyValueStore* GlobalStores::find(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = stores_.find(name);
  return it == stores_.end() ? nullptr : it->second.get();
}

}  // namespace oxbow::streams::detail
