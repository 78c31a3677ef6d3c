// Joins against a reference model written for the test: randomized interleavings of stream
// records and table updates (deletes, null keys and values included), record for record.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>

#include "oxbow/streams/errors.h"
#include "oxbow/streams/streams_builder.h"
#include "oxbow/streams/test_driver.h"

namespace oxbow::streams {
namespace {

struct Event {
  bool table;  // a table update, else a stream record
  std::optional<std::string> key;
  std::optional<std::string> value;  // nullopt: a tombstone / a null value
  int64_t timestamp;
};

std::vector<Event> random_events(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  std::vector<Event> out;
  for (int i = 0; i < n; ++i) {
    Event e;
    e.table = rng() % 3 == 0;
    if (rng() % 20 != 0) e.key = "k" + std::to_string(rng() % 6);
    if (rng() % (e.table ? 5 : 15) != 0) e.value = "v" + std::to_string(i);
    e.timestamp = 1000 + i * 3 - static_cast<int64_t>(rng() % 50);  // out of order
    out.push_back(e);
  }
  return out;
}

using Joined3 = std::tuple<std::optional<std::string>, std::string, int64_t>;

// Kafka's KStream-KTable join, written out: the table is the latest non-null value per key (a
// null value deletes; a null key is not a table row); a stream record with a null value never
// joins; it is joined with the table as of that moment, an inner join only when the table has the
// key, a left join always (with null for a missing row or a null key, KIP-962). The result keeps
// the stream record's key and timestamp.
std::vector<Joined3> reference(const std::vector<Event>& events, bool left) {
  std::map<std::string, std::string> table;
  std::vector<Joined3> out;
  for (const auto& e : events) {
    if (e.table) {
      if (!e.key) continue;
      if (e.value)
        table[*e.key] = *e.value;
      else
        table.erase(*e.key);
      continue;
    }
    if (!e.value) continue;
    std::optional<std::string> other;
    if (e.key && table.count(*e.key)) other = table[*e.key];
    if (!other && !left) continue;
    out.emplace_back(e.key, *e.value + "+" + other.value_or("null"), e.timestamp);
  }
  return out;
}

std::vector<Joined3> run(const std::vector<Event>& events, bool left, bool cached) {
  StreamsBuilder builder;
  auto table = builder.table<std::string, std::string>("table");
  auto stream = builder.stream<std::string, std::string>("stream");
  auto joiner = [](const std::string& v, const std::optional<std::string>& t) {
    return v + "+" + t.value_or("null");
  };
  (left ? stream.leftJoin<std::string>(table, joiner) : stream.join<std::string>(table, joiner))
      .to("out");
  TopologyTestDriver driver(
      builder.build(),
      {{"application.id", "j"}, {"statestore.cache.max.bytes", cached ? "1048576" : "0"}});
  for (const auto& e : events)
    driver.pipe(e.table ? "table" : "stream", e.key, e.value, e.timestamp);
  std::vector<Joined3> got;
  for (auto& r : driver.createOutputTopic<std::string, std::string>("out").readRecordsToList())
    got.emplace_back(r.key, *r.value, r.timestamp);
  return got;
}

TEST(StreamTableJoin, InnerAndLeftJoinsMatchTheReference) {
  for (bool left : {false, true}) {
    for (bool cached : {false, true}) {
      for (uint32_t seed : {1u, 2u, 3u, 4u}) {
        auto events = random_events(seed, 800);
        auto expected = reference(events, left);
        ASSERT_GT(expected.size(), 50u);
        EXPECT_EQ(run(events, left, cached), expected)
            << (left ? "left" : "inner") << " seed " << seed << (cached ? " cached" : "");
      }
    }
  }
}

TEST(StreamTableJoin, JoinersWithTheKeyAndDerivedTablesWork) {
  StreamsBuilder builder;
  auto table = builder.table<std::string, std::string>("table").filter(
      [](const std::string&, const std::string& v) { return v != "hidden"; });
  builder
      .stream<std::string, int64_t>(
          "stream", Consumed<std::string, int64_t>::with(serdes::String(), serdes::Int64()))
      .join<std::string>(table,
                         [](const std::string& k, int64_t n, const std::string& t) {
                           return k + ":" + std::to_string(n) + ":" + t;
                         })
      .to("out");
  TopologyTestDriver driver(builder.build(), {{"application.id", "j"}});
  auto t = driver.createInputTopic<std::string, std::string>("table");
  auto s =
      driver.createInputTopic<std::string, int64_t>("stream", serdes::String(), serdes::Int64());
  t.pipeInput("a", std::string("x"));
  t.pipeInput("b", std::string("hidden"));
  s.pipeInput("a", int64_t{1});
  s.pipeInput("b", int64_t{2});  // filtered out of the table: no match
  auto out = driver.createOutputTopic<std::string, std::string>("out").readValuesToList();
  EXPECT_EQ(out, (std::vector<std::string>{"a:1:x"}));
}

TEST(StreamTableJoin, AReKeyedStreamIsRepartitionedAndCoPartitionedWithTheTable) {
  StreamsBuilder builder;
  auto table = builder.table<std::string, std::string>("profiles");
  builder.stream<std::string, std::string>("clicks")
      .selectKey<std::string>([](const std::string&, const std::string& v) { return v; })
      .leftJoin<std::string>(
          table,
          [](const std::string& click, const std::string& profile) {
            return click + "/" + profile;
          },
          Joined<std::string, std::string, std::string>::as("enrich"))
      .to("out");
  auto topology = builder.build();
  std::string described = topology.describe().toString();
  EXPECT_NE(described.find("Sink: enrich-repartition-sink (topic: enrich-repartition)"),
            std::string::npos)
      << described;
  EXPECT_NE(described.find("Processor: enrich (stores: [profiles-STATE-STORE-0000000000])"),
            std::string::npos)
      << described;
  TopologyTestDriver driver(topology, {{"application.id", "j"}});
  driver.createInputTopic<std::string, std::string>("profiles").pipeInput("u1", std::string("p1"));
  driver.createInputTopic<std::string, std::string>("clicks").pipeInput("x", std::string("u1"));
  auto out = driver.createOutputTopic<std::string, std::string>("out").readKeyValuesToList();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, "u1");
  EXPECT_EQ(out[0].value, "u1/p1");
}

}  // namespace
}  // namespace oxbow::streams

// ---------------------------------------------------------------------------------------------
// Table-table joins against a reference model

namespace oxbow::streams {
namespace {

using detail::TableJoinKind;

struct TableUpdate {
  bool right;
  std::string key;
  std::optional<std::string> value;  // nullopt: a delete
  int64_t timestamp;
};

using Row = std::tuple<std::string, std::optional<std::string>, int64_t>;

std::string joined(const std::optional<std::string>& a, const std::optional<std::string>& b) {
  return a.value_or("null") + "|" + b.value_or("null");
}

// Kafka's KTable-KTable joins, written out for a join read with toStream() (no old values asked):
// an update on one side (its new value n, its previous value old) meets the other side's current
// row o. Inner: nothing without o; else n joined with o, or a delete if n is null. Left, left
// side: nothing when o, n and old are all null; else n joined with o (o may be null), or a delete.
// Left, right side: nothing without the left row o; else o joined with n (n may be null). Outer:
// nothing when o, n and old are all null; else whichever of n and o exist joined, or a delete when
// neither does. The result's time is the later of the update's and o's. Deleting a key a side
// lacks changes nothing there, and reaches no join.
std::vector<Row> table_join_reference(const std::vector<TableUpdate>& updates, TableJoinKind kind) {
  std::map<std::string, std::pair<std::string, int64_t>> sides[2];
  std::vector<Row> out;
  for (const auto& u : updates) {
    auto& mine = sides[u.right ? 1 : 0];
    auto& theirs = sides[u.right ? 0 : 1];
    std::optional<std::string> old;
    if (auto it = mine.find(u.key); it != mine.end()) old = it->second.first;
    if (u.value)
      mine[u.key] = {*u.value, u.timestamp};
    else
      mine.erase(u.key);
    // A source table (its store cached, as by default) forwards no delete of a key it lacks.
    if (!u.value && !old) continue;
    std::optional<std::string> o;
    int64_t time = u.timestamp;
    if (auto it = theirs.find(u.key); it != theirs.end()) {
      o = it->second.first;
      time = std::max(time, it->second.second);
    }
    auto emit = [&](std::optional<std::string> v) { out.emplace_back(u.key, std::move(v), time); };
    auto pair = [&](const std::optional<std::string>& n) {
      return u.right ? joined(o, n) : joined(n, o);
    };
    switch (kind) {
      case TableJoinKind::kInner:
        if (!o) break;
        emit(u.value ? std::optional<std::string>(pair(u.value)) : std::nullopt);
        break;
      case TableJoinKind::kLeft:
        if (u.right) {
          if (o) emit(pair(u.value));
        } else if (o || u.value || old) {
          emit(u.value ? std::optional<std::string>(pair(u.value)) : std::nullopt);
        }
        break;
      case TableJoinKind::kOuter:
        if (!o && !u.value && !old) break;
        emit(o || u.value ? std::optional<std::string>(pair(u.value)) : std::nullopt);
        break;
    }
  }
  return out;
}

std::vector<TableUpdate> random_updates(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  std::vector<TableUpdate> out;
  for (int i = 0; i < n; ++i) {
    TableUpdate u{rng() % 2 == 0, "k" + std::to_string(rng() % 5), std::nullopt,
                  1000 + i * 2 - static_cast<int64_t>(rng() % 30)};
    if (rng() % 4 != 0) u.value = (u.right ? "r" : "l") + std::to_string(i);
    out.push_back(u);
  }
  return out;
}

std::vector<Row> run_table_join(const std::vector<TableUpdate>& updates, TableJoinKind kind,
                                bool materialized) {
  StreamsBuilder builder;
  auto left = builder.table<std::string, std::string>("left");
  auto right = builder.table<std::string, std::string>("right");
  auto joiner = [](const std::optional<std::string>& a, const std::optional<std::string>& b) {
    return joined(a, b);
  };
  auto m = materialized ? Materialized<std::string, std::string>::as("joined")
                        : Materialized<std::string, std::string>();
  KTable<std::string, std::string> out =
      kind == TableJoinKind::kInner  ? left.join<std::string>(right, joiner, Named::as(""), m)
      : kind == TableJoinKind::kLeft ? left.leftJoin<std::string>(right, joiner, Named::as(""), m)
                                     : left.outerJoin<std::string>(right, joiner, Named::as(""), m);
  out.toStream().to("out");
  TopologyTestDriver driver(builder.build(),
                            {{"application.id", "tj"}, {"statestore.cache.max.bytes", "0"}});
  for (const auto& u : updates)
    driver.pipe(u.right ? "right" : "left", u.key, u.value, u.timestamp);
  std::vector<Row> got;
  for (auto& r : driver.createOutputTopic<std::string, std::string>("out").readRecordsToList())
    got.emplace_back(*r.key, r.value, r.timestamp);
  return got;
}

TEST(TableTableJoin, InnerLeftAndOuterJoinsMatchTheReference) {
  for (auto kind : {TableJoinKind::kInner, TableJoinKind::kLeft, TableJoinKind::kOuter}) {
    for (bool materialized : {false, true}) {
      for (uint32_t seed : {11u, 12u, 13u}) {
        auto updates = random_updates(seed, 600);
        auto expected = table_join_reference(updates, kind);
        ASSERT_GT(expected.size(), 100u);
        ASSERT_EQ(run_table_join(updates, kind, materialized), expected)
            << "kind " << static_cast<int>(kind) << " seed " << seed
            << (materialized ? " materialized" : "");
      }
    }
  }
}

TEST(TableTableJoin, AJoinedTableCanBeJoinedAndReadAgain) {
  // The joined table's own lookup (no store) answers a stream-table join downstream.
  StreamsBuilder builder;
  auto names = builder.table<std::string, std::string>("names");
  auto emails = builder.table<std::string, std::string>("emails");
  auto users = names.join<std::string>(
      emails, [](const std::string& n, const std::string& e) { return n + " <" + e + ">"; });
  builder.stream<std::string, std::string>("logins")
      .join<std::string>(users, [](const std::string& when,
                                   const std::string& user) { return user + " at " + when; })
      .to("out");
  TopologyTestDriver driver(builder.build(), {{"application.id", "tj"}});
  driver.createInputTopic<std::string, std::string>("names").pipeInput("u1", std::string("Ann"));
  driver.createInputTopic<std::string, std::string>("emails").pipeInput("u1", std::string("a@x"));
  driver.createInputTopic<std::string, std::string>("logins").pipeInput("u1", std::string("9:00"));
  driver.createInputTopic<std::string, std::string>("logins").pipeInput("u2", std::string("9:05"));
  auto out = driver.createOutputTopic<std::string, std::string>("out").readValuesToList();
  EXPECT_EQ(out, (std::vector<std::string>{"Ann <a@x> at 9:00"}));
}

}  // namespace
}  // namespace oxbow::streams

// ---------------------------------------------------------------------------------------------
// Stream-global table joins against a reference model

namespace oxbow::streams {
namespace {

TEST(StreamGlobalJoin, InnerAndLeftJoinsThroughAKeySelectorMatchTheReference) {
  for (bool left : {false, true}) {
    for (uint32_t seed : {21u, 22u, 23u}) {
      std::mt19937 rng(seed);
      StreamsBuilder builder;
      auto users = builder.globalTable<std::string, std::string>("users");
      auto orders = builder.stream<std::string, std::string>("orders");
      // The order's value names its user; "-" names none (the selector gives null).
      auto selector = [](const std::string&, const std::string& user) {
        return user == "-" ? std::optional<std::string>() : std::optional<std::string>(user);
      };
      auto joiner = [](const std::string& user, const std::optional<std::string>& name) {
        return user + ":" + name.value_or("null");
      };
      (left ? orders.leftJoin<std::string>(users, selector, joiner)
            : orders.join<std::string>(users, selector, joiner))
          .to("out");
      TopologyTestDriver driver(builder.build(), {{"application.id", "g"}});
      // Kafka's semantics, written out: the global table is the latest value per key (null
      // deletes) as of each order; an order joins the row its selector picks; inner joins skip
      // orders without one (or without a pick), left joins join those with null.
      std::map<std::string, std::string> table;
      std::vector<std::pair<std::string, std::string>> expected;
      for (int i = 0; i < 600; ++i) {
        std::string user = "u" + std::to_string(rng() % 8);
        if (rng() % 3 == 0) {
          std::optional<std::string> name;
          if (rng() % 4 != 0) name = "n" + std::to_string(i);
          driver.pipe("users", user, name, i);
          if (name)
            table[user] = *name;
          else
            table.erase(user);
          continue;
        }
        if (rng() % 10 == 0) user = "-";
        std::string order = "o" + std::to_string(i);
        driver.pipe("orders", order, user, i);
        auto it = user == "-" ? table.end() : table.find(user);
        if (it == table.end() && !left) continue;
        expected.emplace_back(order, user + ":" + (it == table.end() ? "null" : it->second));
      }
      std::vector<std::pair<std::string, std::string>> got;
      for (auto& kv :
           driver.createOutputTopic<std::string, std::string>("out").readKeyValuesToList())
        got.emplace_back(kv.key, kv.value);
      ASSERT_GT(expected.size(), 100u);
      EXPECT_EQ(got, expected) << (left ? "left" : "inner") << " seed " << seed;
    }
  }
}

TEST(StreamGlobalJoin, TheGlobalStoreIsReadableAndOutsideTheTasks) {
  StreamsBuilder builder;
  auto rates = builder.globalTable<std::string, std::string>(
      "rates", Consumed<std::string, std::string>(),
      Materialized<std::string, std::string>::as("rates-store"));
  EXPECT_EQ(rates.queryableStoreName(), "rates-store");
  builder.stream<std::string, std::string>("payments")
      .join<std::string>(
          rates, [](const std::string&, const std::string& currency) { return currency; },
          [](const std::string& currency, const std::string& rate) {
            return currency + "@" + rate;
          })
      .to("out");
  auto topology = builder.build();
  // One sub-topology: the global table's topic is no task's input.
  EXPECT_EQ(topology.describe().subtopologies().size(), 1u);
  TopologyTestDriver driver(topology, {{"application.id", "g"}});
  driver.createInputTopic<std::string, std::string>("rates").pipeInput("EUR", std::string("1.1"));
  driver.createInputTopic<std::string, std::string>("payments").pipeInput("p1", std::string("EUR"));
  auto out = driver.createOutputTopic<std::string, std::string>("out").readValuesToList();
  EXPECT_EQ(out, (std::vector<std::string>{"EUR@1.1"}));
}

}  // namespace
}  // namespace oxbow::streams
