#pragma once
// Client quotas, as Kafka's (KIP-13, KIP-55, KIP-124, KIP-546): produce and fetch byte rates and
// request time per user, client-id or (user, client-id), with a default at each level, and the
// rate measurement that turns a client over its quota into a throttle time.
//
// Quotas persist in `<first log dir>/oxbow-client-quotas.json`, one entry per entity; a null name
// is the default entity of its type:
//   [{"entity": {"user": "alice", "client-id": null}, "quotas": {"producer_byte_rate": 1048576}}]
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace oxbow::broker {

inline constexpr const char* kQuotaUser = "user";
inline constexpr const char* kQuotaClientId = "client-id";
inline constexpr const char* kQuotaIp = "ip";
inline constexpr const char* kProducerByteRate = "producer_byte_rate";
inline constexpr const char* kConsumerByteRate = "consumer_byte_rate";
inline constexpr const char* kRequestPercentage = "request_percentage";
inline constexpr const char* kConnectionCreationRate = "connection_creation_rate";
inline constexpr const char* kControllerMutationRate = "controller_mutation_rate";

// Entity type -> name; nullopt names the default entity of that type.
using QuotaEntity = std::map<std::string, std::optional<std::string>>;
using QuotaValues = std::map<std::string, double>;  // quota key -> value

// Byte rates of produce requests and fetch responses; request_percentage, the time requests keep
// the broker busy in percent of one thread; and connection_creation_rate, new connections per
// second from one IP address (KIP-612).
enum class QuotaType { kProduce, kFetch, kRequest, kConnection, kMutation };

// The outcome of charging partition mutations (KIP-599) against controller_mutation_rate.
struct MutationCharge {
  bool accepted = true;     // false: THROTTLING_QUOTA_EXCEEDED, nothing charged
  int64_t throttle_ms = 0;  // for the response's throttle_time_ms
};

// quota.window.num samples of quota.window.size.seconds each.
struct QuotaWindow {
  int samples = 11;
  int64_t window_ms = 1000;
};

// Why an entity or one of its changes cannot be accepted (Kafka's INVALID_REQUEST messages);
// empty when it can.
std::string quota_entity_problem(const QuotaEntity& entity);
std::string quota_key_problem(const QuotaEntity& entity, const std::string& key);
std::string quota_value_problem(const QuotaEntity& entity, const std::string& key, double value);

// Kafka's rate over a sliding window of samples (its SampledStat and Rate): a sample covers
// window_ms from its first event, and the rate divides by at least samples - 1 windows, so that a
// client's first burst is spread over the whole window rather than over its first millisecond.
class SampledRate {
 public:
  explicit SampledRate(QuotaWindow window) : window_(window), samples_(window.samples) {}
  void record(double value, int64_t now_ms);
  double per_second(int64_t now_ms);
  // The span, in ms, the rate is measured over (Kafka's Rate.windowSize).
  int64_t span_ms(int64_t now_ms);

 private:
  struct Sample {
    int64_t start_ms = -1;  // -1: unused
    int64_t last_event_ms = -1;
    double value = 0;
  };
  void expire(int64_t now_ms);

  QuotaWindow window_;
  std::vector<Sample> samples_;
  size_t current_ = 0;
};

class ClientQuotas {
 public:
  // `mutation_window`: controller.quota.window.num and .size.seconds, which size the burst of
  // controller_mutation_rate's token bucket.
  ClientQuotas(std::string path, QuotaWindow window, QuotaWindow mutation_window = {})
      : path_(std::move(path)), window_(window), mutation_window_(mutation_window) {}
  bool load(std::string& error);

  // Every entity with at least one quota.
  std::vector<std::pair<QuotaEntity, QuotaValues>> all() const;
  // Per entity, key -> new value, or nullopt to remove it. Persists before it takes effect;
  // false with `error` when the file cannot be written.
  using Changes = std::vector<std::pair<QuotaEntity, std::map<std::string, std::optional<double>>>>;
  bool alter(const Changes& changes, std::string& error);

  // False while no quota is set at all: the request paths then skip quota work entirely.
  bool active() const { return active_.load(std::memory_order_relaxed); }

  // Counts `amount` (bytes; for kRequest, percent-seconds of a thread) against the client's quota
  // of that type and returns how long, in ms, the client must be throttled for it (0: within the
  // quota, or no quota applies). As Kafka, a request-time or connection throttle is at most one
  // sample window. For kConnection, `client_id` is the client's IP address and `user` is unused.
  int64_t record(QuotaType type, const std::string& user, const std::string& client_id,
                 double amount, int64_t now_ms);
  // controller_mutation_rate, Kafka's token bucket: a burst of rate x samples x window, refilled at
  // the rate. Strict (the request versions that know THROTTLING_QUOTA_EXCEEDED) refuses when the
  // bucket is already below zero and otherwise takes all `partitions`; permissive always takes
  // them. The throttle is the time until the bucket is back at zero.
  MutationCharge charge_mutations(const std::string& user, const std::string& client_id,
                                  double partitions, bool strict, int64_t now_ms);
  // Takes back bytes recorded for a response that was not sent (a throttled fetch).
  void unrecord(QuotaType type, const std::string& user, const std::string& client_id, double bytes,
                int64_t now_ms);
  // The most bytes the quota allows over one measuring span (Kafka caps fetch sizes to it);
  // nullopt when no quota applies.
  std::optional<int64_t> max_bytes_per_span(QuotaType type, const std::string& user,
                                            const std::string& client_id) const;

 private:
  // The quota that applies to a client, and the bucket its bytes count in: Kafka's metric tags,
  // which make a default quota a separate allowance for each user or client-id it covers.
  struct Bound {
    std::string user_tag;
    std::string client_tag;
    double limit = 0;
  };
  std::optional<Bound> resolve(QuotaType type, const std::string& user,
                               const std::string& client_id) const;
  std::optional<Bound> resolve_ip(const std::string& address) const;
  std::optional<double> quota_of(const QuotaEntity& entity, const char* key) const;
  // Recomputes what the lookups use from quotas_: the types set, and the rates of named IPs.
  void index_quotas();
  static std::map<std::string, std::string> resolve_ip_names(
      const std::vector<QuotaEntity>& entities);
  void forget_idle_buckets(int64_t now_ms);

  std::string path_;
  QuotaWindow window_;
  mutable std::mutex mutex_;
  std::map<QuotaEntity, QuotaValues> quotas_;
  std::map<std::string, double> ip_rates_;           // resolved address of a named IP -> its rate
  std::map<std::string, std::string> ip_addresses_;  // a named IP as given -> its address
  std::array<bool, 5> types_set_{};  // by QuotaType: does any entity set that quota?
  std::atomic<bool> active_{false};
  struct Bucket {
    SampledRate rate;
    int64_t last_used_ms = 0;
  };
  std::map<std::tuple<QuotaType, std::string, std::string>, Bucket> buckets_;
  QuotaWindow mutation_window_;
  struct TokenBucket {
    double tokens = 0;
    int64_t last_ms = 0;
  };
  std::map<std::pair<std::string, std::string>, TokenBucket> mutation_buckets_;
  int64_t next_sweep_ms_ = 0;
};

}  // namespace oxbow::broker
