// Foreign-key table joins (KIP-213) against a reference model written for the test: randomized
// interleavings of left and right table updates (foreign keys changing, rows without one, deletes
// of absent keys), record for record, then the final table against the relational join.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "oxbow/streams/errors.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"
#include "streams/dsl/fk_join_wrappers.h"

namespace oxbow::streams {
namespace {

using Table = std::map<std::string, std::string>;
using Out = std::pair<std::string, std::optional<std::string>>;  // nullopt: a tombstone

struct Update {
  bool right;
  std::string key;
  std::optional<std::string> value;  // nullopt: a delete
};

// Left values are "fk|payload"; one without '|' has no foreign key.
std::optional<std::string> foreign_key(const std::string& value) {
  auto bar = value.find('|');
  if (bar == std::string::npos) return std::nullopt;
  return value.substr(0, bar);
}

std::string joined(const std::string& left, const std::optional<std::string>& right) {
  return left + "+" + right.value_or("null");
}

std::optional<std::string> get(const Table& table, const std::string& key) {
  auto it = table.find(key);
  return it == table.end() ? std::nullopt : std::optional<std::string>(it->second);
}

void set(Table& table, const std::string& key, const std::optional<std::string>& value) {
  if (value)
    table[key] = *value;
  else
    table.erase(key);
}

// Kafka's foreign-key join written out (SubscriptionSendProcessorSupplier's instructions,
// SubscriptionJoinProcessorSupplier's answers, ForeignTableJoinProcessorSupplier's prefix scan,
// ResponseJoinProcessorSupplier's hash check), for a driver that completes each update's round
// trips through the internal topics before the next update, so that no response is stale.
// Both source tables are materialized by the join (it reads them), and their stores' caching layer,
// there even with a zero budget, forwards no delete of a key the store lacks
// (CachingKeyValueStore.putAndMaybeForward): such deletes reach the join from neither side. A
// materialized result table's cache drops its tombstones for keys it lacks in the same way; an
// unmaterialized one (a store-less KTableSource) forwards them all.
class Reference {
 public:
  Reference(bool left_join, bool materialized)
      : left_join_(left_join), materialized_(materialized) {}

  void apply(const Update& u) {
    if (u.right)
      right_update(u.key, u.value);
    else
      left_update(u.key, u.value);
  }

  // The relational join of the tables as they are now.
  Table relational() const {
    Table out;
    for (const auto& [k, v] : left_) {
      auto fk = foreign_key(v);
      auto match = fk ? get(right_, *fk) : std::nullopt;
      if (match || left_join_) out[k] = joined(v, match);
    }
    return out;
  }

  std::vector<Out> out;
  Table result;  // the output folded: what a materialized result holds

 private:
  void left_update(const std::string& k, const std::optional<std::string>& value) {
    auto old = get(left_, k);
    if (!old && !value) return;
    set(left_, k, value);
    auto fo = old ? foreign_key(*old) : std::nullopt;
    auto fn = value ? foreign_key(*value) : std::nullopt;
    auto match = fn ? get(right_, *fn) : std::nullopt;
    // A left join answers every change (a null foreign key included) with the row's result.
    if (left_join_) return emit(k, value ? std::optional(joined(*value, match)) : std::nullopt);
    if (!fn) {
      if (fo) emit(k, std::nullopt);  // DELETE_KEY_AND_PROPAGATE
      return;
    }
    // PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE when the key moved away from another foreign key (its
    // old result may need deleting), else PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE.
    if (match)
      emit(k, joined(*value, match));
    else if (fo && *fo != *fn)
      emit(k, std::nullopt);
  }

  void right_update(const std::string& f, const std::optional<std::string>& value) {
    auto old = get(right_, f);
    if (!old && !value) return;
    set(right_, f, value);
    // The subscribers, in the byte order of the subscription store's keys (same foreign key:
    // by primary key), each with the left row it subscribed with, which is the current one.
    for (const auto& [k, v] : left_) {
      if (foreign_key(v) != f) continue;
      emit(k, value || left_join_ ? std::optional(joined(v, value)) : std::nullopt);
    }
  }

  void emit(const std::string& k, const std::optional<std::string>& value) {
    if (!value && materialized_ && !result.count(k)) return;
    set(result, k, value);
    out.emplace_back(k, value);
  }

  bool left_join_, materialized_;
  Table left_, right_;
};

// Keys k0..k7 pointing at f0..f4, the foreign key often changing, sometimes none; the same value
// set again now and then (the join answers it like any update); deletes of absent keys on both
// sides.
std::vector<Update> random_updates(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  Table current[2];
  std::vector<Update> out;
  for (int i = 0; i < n; ++i) {
    Update u{rng() % 3 == 0, "", std::nullopt};
    auto& side = current[u.right ? 1 : 0];
    u.key = (u.right ? "f" : "k") + std::to_string(rng() % (u.right ? 5 : 8));
    int roll = static_cast<int>(rng() % 10);
    if (roll == 0 && side.count(u.key))
      u.value = side[u.key];
    else if (roll <= 2)
      u.value = std::nullopt;
    else if (u.right)
      u.value = "r" + std::to_string(i);
    else if (roll == 3)
      u.value = "nofk" + std::to_string(i);
    else
      u.value = "f" + std::to_string(rng() % 5) + "|l" + std::to_string(i);
    set(side, u.key, u.value);
    out.push_back(u);
  }
  return out;
}

std::optional<std::string> extract(const std::string& value) {
  return foreign_key(value);
}

struct Run {
  std::vector<Out> out;
  Table store;  // the materialized result's store, when there is one
};

Run run_join(const std::vector<Update>& updates, bool left_join, bool materialized, bool cached) {
  StreamsBuilder builder;
  auto left = builder.table<std::string, std::string>("left");
  auto right = builder.table<std::string, std::string>("right");
  auto inner_joiner = [](const std::string& l, const std::string& r) { return l + "+" + r; };
  auto left_joiner = [](const std::string& l, const std::optional<std::string>& r) {
    return joined(l, r);
  };
  auto m = Materialized<std::string, std::string>::as("fk-out");
  KTable<std::string, std::string> out =
      left_join ? (materialized ? left.leftJoin<std::string>(right, extract, left_joiner, m)
                                : left.leftJoin<std::string>(right, extract, left_joiner))
                : (materialized ? left.join<std::string>(right, extract, inner_joiner, m)
                                : left.join<std::string>(right, extract, inner_joiner));
  out.toStream().to("out");
  TopologyTestDriver driver(
      builder.build(),
      {{"application.id", "fk"}, {"statestore.cache.max.bytes", cached ? "1048576" : "0"}});
  int64_t time = 1000;
  for (const auto& u : updates) driver.pipe(u.right ? "right" : "left", u.key, u.value, time++);
  Run run;
  for (auto& r : driver.createOutputTopic<std::string, std::string>("out").readRecordsToList())
    run.out.emplace_back(r.key.value_or("<null key>"), r.value);
  if (materialized)
    for (auto& kv : driver.getKeyValueStore<std::string, std::string>("fk-out").all())
      run.store[kv.key] = kv.value;
  return run;
}

std::string describe(const Out& o) {
  return o.first + " -> " + o.second.value_or("<tombstone>");
}

// The first record where the two differ, with the updates up to the one that made it.
std::string first_difference(const std::vector<Update>& updates, const std::vector<Out>& got,
                             bool left_join, bool materialized) {
  Reference ref(left_join, materialized);
  size_t seen = 0;
  for (size_t i = 0; i < updates.size(); ++i) {
    ref.apply(updates[i]);
    for (; seen < ref.out.size(); ++seen) {
      if (seen < got.size() && got[seen] == ref.out[seen]) continue;
      return "record " + std::to_string(seen) + " after update " + std::to_string(i) + " (" +
             (updates[i].right ? "right " : "left ") + updates[i].key + " = " +
             updates[i].value.value_or("<delete>") + "): expected " + describe(ref.out[seen]) +
             ", got " + (seen < got.size() ? describe(got[seen]) : "nothing");
    }
  }
  return seen < got.size() ? "extra record " + describe(got[seen]) : "none";
}

Table fold(const std::vector<Out>& out) {
  Table table;
  for (const auto& [k, v] : out) set(table, k, v);
  return table;
}

size_t tombstones(const std::vector<Out>& out) {
  return std::count_if(out.begin(), out.end(), [](const Out& o) { return !o.second; });
}

TEST(ForeignKeyJoin, InnerAndLeftJoinsMatchTheReferenceRecordForRecord) {
  for (bool left_join : {false, true}) {
    for (bool materialized : {false, true}) {
      for (bool cached : {false, true}) {
        for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
          auto updates = random_updates(seed, 400);
          Reference ref(left_join, materialized);
          for (const auto& u : updates) ref.apply(u);
          // The reference's own output, folded, is the relational join: the model is consistent.
          ASSERT_EQ(ref.result, ref.relational());
          ASSERT_GT(ref.out.size(), 150u);
          ASSERT_GT(tombstones(ref.out), 10u);
          std::string what = std::string(left_join ? "left" : "inner") + " seed " +
                             std::to_string(seed) + (materialized ? " materialized" : "") +
                             (cached ? " cached" : "");
          auto run = run_join(updates, left_join, materialized, cached);
          EXPECT_EQ(run.out, ref.out)
              << what << ": " << first_difference(updates, run.out, left_join, materialized);
          EXPECT_EQ(fold(run.out), ref.relational()) << what;
          if (materialized) {
            EXPECT_EQ(run.store, ref.relational()) << what;
          }
        }
      }
    }
  }
}

TEST(ForeignKeyJoin, SmallCasesOfEachRule) {
  // Each case: its updates, then what the inner join and the left join write for them.
  using U = Update;
  struct Case {
    const char* what;
    std::vector<Update> updates;
    std::vector<Out> inner, left;
  };
  auto r = [](const char* v) { return std::optional<std::string>(v); };
  std::optional<std::string> none;
  std::vector<Case> cases = {
      {"insert without a match", {U{false, "k", r("f|a")}}, {}, {{"k", r("f|a+null")}}},
      {"insert with a match",
       {U{true, "f", r("x")}, U{false, "k", r("f|a")}},
       {{"k", r("f|a+x")}},
       {{"k", r("f|a+x")}}},
      {"same foreign key, no match: nothing to delete in an inner join",
       {U{false, "k", r("f|a")}, U{false, "k", r("f|b")}},
       {},
       {{"k", r("f|a+null")}, {"k", r("f|b+null")}}},
      {"foreign key changed to one without a match",
       {U{true, "f", r("x")}, U{false, "k", r("f|a")}, U{false, "k", r("g|b")}},
       {{"k", r("f|a+x")}, {"k", none}},
       {{"k", r("f|a+x")}, {"k", r("g|b+null")}}},
      {"foreign key removed, then the row deleted",
       {U{true, "f", r("x")}, U{false, "k", r("f|a")}, U{false, "k", r("nofk")},
        U{false, "k", none}},
       {{"k", r("f|a+x")}, {"k", none}},
       {{"k", r("f|a+x")}, {"k", r("nofk+null")}, {"k", none}}},
      {"a row without a foreign key deleted; an absent row deleted",
       {U{false, "k", r("nofk")}, U{false, "k", none}, U{false, "k", none}},
       {},
       {{"k", r("nofk+null")}, {"k", none}}},
      {"right updates reach every subscriber in key order, deleted ones too",
       {U{false, "k2", r("f|a")}, U{false, "k1", r("f|b")}, U{false, "k3", r("g|c")},
        U{true, "f", r("x")}, U{true, "f", r("x")}, U{true, "f", none}, U{true, "f", none}},
       {{"k1", r("f|b+x")},
        {"k2", r("f|a+x")},
        {"k1", r("f|b+x")},
        {"k2", r("f|a+x")},
        {"k1", none},
        {"k2", none}},
       {{"k2", r("f|a+null")},
        {"k1", r("f|b+null")},
        {"k3", r("g|c+null")},
        {"k1", r("f|b+x")},
        {"k2", r("f|a+x")},
        {"k1", r("f|b+x")},
        {"k2", r("f|a+x")},
        {"k1", r("f|b+null")},
        {"k2", r("f|a+null")}}},
      {"a subscriber that moved away hears nothing more",
       {U{false, "k", r("f|a")}, U{false, "k", r("g|b")}, U{true, "f", r("x")}},
       {{"k", none}},
       {{"k", r("f|a+null")}, {"k", r("g|b+null")}}},
  };
  for (const auto& c : cases) {
    for (bool left_join : {false, true}) {
      const auto& expected = left_join ? c.left : c.inner;
      Reference ref(left_join, false);
      for (const auto& u : c.updates) ref.apply(u);
      ASSERT_EQ(ref.out, expected) << "the reference, " << c.what;
      EXPECT_EQ(run_join(c.updates, left_join, false, false).out, expected)
          << (left_join ? "left: " : "inner: ") << c.what;
    }
  }
}

TEST(ForeignKeyJoin, TheExtractorMayReadTheKey) {
  // Orders keyed "customer/order", the customer read from the key; the value is the amount.
  StreamsBuilder builder;
  auto orders = builder.table<std::string, std::string>("orders");
  auto customers = builder.table<std::string, std::string>("customers");
  orders
      .join<std::string>(
          customers,
          [](const std::string& key, const std::string&) { return key.substr(0, key.find('/')); },
          [](const std::string& amount, const std::string& name) { return name + ":" + amount; })
      .toStream()
      .to("out");
  TopologyTestDriver driver(builder.build(), {{"application.id", "fk"}});
  auto o = driver.createInputTopic<std::string, std::string>("orders");
  auto c = driver.createInputTopic<std::string, std::string>("customers");
  c.pipeInput("ann", std::string("Ann"));
  o.pipeInput("ann/1", std::string("10"));
  o.pipeInput("bob/2", std::string("20"));
  c.pipeInput("bob", std::string("Bob"));
  c.pipeInput("ann", std::string("Anne"));
  auto out = driver.createOutputTopic<std::string, std::string>("out").readKeyValuesToList();
  std::vector<std::pair<std::string, std::string>> got;
  for (auto& kv : out) got.emplace_back(kv.key, kv.value);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, std::string>>{
                     {"ann/1", "Ann:10"}, {"bob/2", "Bob:20"}, {"ann/1", "Anne:10"}}));
}

// Where describe() puts a topic or store: "source <sub-topology>", "sink <sub-topology>" and
// "store <sub-topology>" entries.
std::multiset<std::string> places(const TopologyDescription& d, const std::string& name) {
  std::multiset<std::string> out;
  for (const auto& sub : d.subtopologies()) {
    std::string id = std::to_string(sub.id);
    for (const auto& n : sub.nodes) {
      bool sink = n.kind == NodeDescription::Kind::kSink;
      for (const auto& t : n.topics)
        if (t == name) out.insert((sink ? "sink " : "source ") + id);
      for (const auto& s : n.stores)
        if (s == name) out.insert("store " + id);
    }
  }
  return out;
}

bool has_node(const TopologyDescription& d, const std::string& name) {
  for (const auto& sub : d.subtopologies())
    for (const auto& n : sub.nodes)
      if (n.name == name) return true;
  return false;
}

TopologyDescription fk_topology(std::optional<std::string> name) {
  StreamsBuilder builder;
  auto left = builder.table<std::string, std::string>("left");
  auto right = builder.table<std::string, std::string>("right");
  auto joiner = [](const std::string& l, const std::string& r) { return l + "+" + r; };
  (name ? left.join<std::string>(right, extract, joiner,
                                 TableJoined<std::string, std::string>::as(*name))
        : left.join<std::string>(right, extract, joiner))
      .toStream()
      .to("out");
  return builder.build().describe();
}

// The left table and the responses' side in one sub-topology, the right table with the
// subscriptions in the other: subscriptions go from the first to the second, responses back.
void expect_internal_names(const TopologyDescription& d, const std::string& registration,
                           const std::string& store, const std::string& response) {
  ASSERT_EQ(d.subtopologies().size(), 2u) << d;
  // Kafka numbers sub-topologies by their sources' names: the left table's source comes first.
  const std::string l = "0", r = "1";
  ASSERT_EQ(places(d, "left"), std::multiset<std::string>{"source " + l}) << d;
  ASSERT_EQ(places(d, "right"), std::multiset<std::string>{"source " + r}) << d;
  EXPECT_EQ(places(d, registration), (std::multiset<std::string>{"sink " + l, "source " + r})) << d;
  EXPECT_EQ(places(d, response), (std::multiset<std::string>{"sink " + r, "source " + l})) << d;
  auto stores = places(d, store);
  ASSERT_FALSE(stores.empty()) << d;
  for (const auto& s : stores) EXPECT_EQ(s, "store " + r) << d;
}

TEST(ForeignKeyJoin, NamesItsTopicsAndStoreAsKafka) {
  auto unnamed = fk_topology(std::nullopt);
  expect_internal_names(unnamed, "KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic",
                        "KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010",
                        "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic");
  EXPECT_TRUE(has_node(unnamed, "KTABLE-FK-JOIN-OUTPUT-0000000018")) << unnamed;

  auto named = fk_topology("orders");
  expect_internal_names(named, "orders-subscription-registration-topic",
                        "orders-subscription-store", "orders-subscription-response-topic");
}

TEST(ForeignKeyJoin, ANamedJoinRunsThroughItsNamedTopics) {
  StreamsBuilder builder;
  auto left = builder.table<std::string, std::string>("left");
  auto right = builder.table<std::string, std::string>("right");
  left.leftJoin<std::string>(
          right, extract,
          [](const std::string& l, const std::optional<std::string>& r) { return joined(l, r); },
          TableJoined<std::string, std::string>::as("orders"))
      .toStream()
      .to("out");
  TopologyTestDriver driver(builder.build(), {{"application.id", "app"}});
  driver.pipe("right", "f", "x", 1);
  driver.pipe("left", "k", "f|a", 2);
  auto out = driver.createOutputTopic<std::string, std::string>("out").readKeyValuesToList();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value, "f|a+x");
  auto topics = driver.producedTopicNames();
  for (const char* topic :
       {"app-orders-subscription-registration-topic", "app-orders-subscription-response-topic"})
    EXPECT_NE(std::find(topics.begin(), topics.end(), topic), topics.end()) << topic;
}

// Kafka's Murmur3Test vectors (seed 123), which its hash128 and ours must both give.
TEST(ForeignKeyJoin, TheValueHashIsKafkasMurmur3) {
  struct Case {
    const char* input;
    int64_t h1, h2;
  };
  for (Case c : {Case{"21", 5857341059704281894, -5288187638297930763},
                 Case{"foobar", -351361463397418609, 8959716011862540668},
                 Case{"a-little-bit-long-string", 8836256500583638442, -198172363548498523},
                 Case{"a-little-bit-longer-string", 1838346159335108511, 8794688210320490705},
                 Case{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -4024021876037397259,
                      -1482317706335141238},
                 Case{"abc", 1489494923063836066, -5440978547625122829}}) {
    auto hash = detail::murmur3_hash128(c.input, 123);
    EXPECT_EQ(static_cast<int64_t>(hash[0]), c.h1) << c.input;
    EXPECT_EQ(static_cast<int64_t>(hash[1]), c.h2) << c.input;
  }
}

// The wrappers' bytes as Kafka's SubscriptionWrapperSerde (v1) and
// SubscriptionResponseWrapperSerde (v0) lay them out.
TEST(ForeignKeyJoin, SubscriptionAndResponseBytesAreKafkas) {
  auto string_serde = detail::erase(serdes::String());
  auto subscriptions = detail::subscription_serde(string_serde);
  detail::Subscription s{detail::ValueHash{1, 2},
                         detail::SubscriptionInstruction::kPropagateNullIfNoForeignValue,
                         Datum(std::string("pk")), 3};
  std::string hash_bytes = std::string("\0\0\0\0\0\0\0\x01\0\0\0\0\0\0\0\x02", 16);
  std::string bytes = subscriptions.serialize("t", Datum(s));
  EXPECT_EQ(bytes, std::string("\x01\x02", 2) + hash_bytes + "pk" + std::string("\0\0\0\x03", 4));
  auto back = datum_cast<detail::Subscription>(subscriptions.deserialize("t", bytes));
  EXPECT_EQ(back.hash, s.hash);
  EXPECT_EQ(back.instruction, s.instruction);
  EXPECT_EQ(detail::as<std::string>(back.primary_key), "pk");
  EXPECT_EQ(back.primary_partition, 3);
  s.hash.reset();
  s.instruction = detail::SubscriptionInstruction::kDeleteKeyAndPropagate;
  EXPECT_EQ(subscriptions.serialize("t", Datum(s)), std::string("\x81\x01pk\0\0\0\x03", 8));
  EXPECT_THROW(subscriptions.deserialize("t", std::string("\x01\x07pk\0\0\0\x03", 8)),
               SerializationException);
  EXPECT_THROW(subscriptions.deserialize("t", std::string("\x01", 1)), SerializationException);

  auto responses = detail::subscription_response_serde(string_serde);
  detail::SubscriptionResponse r{detail::ValueHash{1, 2}, Datum(std::string("fv")), 5};
  EXPECT_EQ(responses.serialize("t", Datum(r)), std::string("\0", 1) + hash_bytes + "fv");
  r.hash.reset();
  r.foreign_value = Datum();
  EXPECT_EQ(responses.serialize("t", Datum(r)), std::string("\x80", 1));
  auto none = datum_cast<detail::SubscriptionResponse>(responses.deserialize("t", "\x80"));
  EXPECT_FALSE(none.hash);
  EXPECT_FALSE(none.foreign_value.has_value());
  EXPECT_THROW(responses.deserialize("t", std::string("\x00\x01", 2)), SerializationException);
  EXPECT_EQ(detail::primary_key_of(detail::combined_key_prefix("fk") + "pk"), "pk");
}

}  // namespace
}  // namespace oxbow::streams
