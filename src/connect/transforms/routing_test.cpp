// Filter, RegexRouter, InsertHeader, DropHeaders, the predicates and the chain a connector's
// config builds, with Kafka's outputs and messages.
#include <gtest/gtest.h>

#include "connect/transforms/transforms_test_util.h"
#include "oxbow/connect/transformation.h"

namespace oxbow::connect {
namespace {

std::string route(const std::string& regex, const std::string& replacement,
                  const std::string& topic) {
  auto router = createTransformation("org.apache.kafka.connect.transforms.RegexRouter");
  router->configure({{"regex", regex}, {"replacement", replacement}});
  return router->apply(ConnectRecord(topic, 0, nullptr, Value(), nullptr, Value()))->topic();
}

template <class Body>
std::string configErrorOf(Body body) {
  return testing::messageOf<ConfigException>(body);
}

ConnectRecord recordWithHeaders(Headers headers) {
  return ConnectRecord("topic", 0, Schema::STRING_SCHEMA, "key", Schema::STRING_SCHEMA, "value", 0,
                       std::move(headers));
}

TEST(RegexRouterTest, ReplacesMatchingTopics) {
  EXPECT_EQ(route("foo", "bar", "foo"), "bar");
  EXPECT_EQ(route("foo", "bar", "orig"), "orig");
  EXPECT_EQ(route("(.*)", "$1", "orig"), "orig");
  EXPECT_EQ(route("(.*)", "prefix-$1", "orig"), "prefix-orig");
  EXPECT_EQ(route("(.*)", "$1-suffix", "orig"), "orig-suffix");
  EXPECT_EQ(route("(.*)-(\\d\\d\\d\\d\\d\\d\\d\\d)", "$1", "index-20160117"), "index");
  EXPECT_EQ(configErrorOf([] { route("(", "x", "t"); })
                .rfind("Invalid value ( for configuration "
                       "regex: Invalid regex: ",
                       0),
            0u);
}

TEST(RegexRouterTest, ReadsJavasReplacementSyntaxAndRefusesMissingGroups) {
  EXPECT_EQ(route("(a)(b)", "$2$1", "ab"), "ba");
  EXPECT_EQ(route("(.*)", "\\$$1\\\\", "t"), "$t\\");  // \$ a dollar, \\ a backslash
  EXPECT_EQ(configErrorOf([] {
              route("(.*)", "$2", "t");
            }).rfind("Invalid value $2 for configuration replacement: Invalid replacement: ", 0),
            0u);
  // Linear-time matching: a long name against a pattern that backtracks exponentially elsewhere.
  std::string topic(100000, 'a');
  EXPECT_EQ(route("(a|aa)*b", "x", topic), topic);
}

TEST(InsertHeaderTest, AddsAHeaderWithTheLiteralParsed) {
  auto xform = createTransformation("InsertHeader");
  xform->configure({{"header", "inserted"}, {"value.literal", "inserted-value"}});
  Headers headers;
  headers.add("existing", Schema::STRING_SCHEMA, "existing-value");
  ConnectRecord out = *xform->apply(recordWithHeaders(headers));
  Headers expected = headers;
  expected.add("inserted", Schema::STRING_SCHEMA, "inserted-value");
  EXPECT_EQ(out.headers(), expected);
  EXPECT_EQ(out.value(), Value("value"));

  xform->configure({{"header", "inserted"}, {"value.literal", "1"}});
  out = *xform->apply(recordWithHeaders(headers));
  expected = headers;
  expected.add("inserted", Schema::INT8_SCHEMA, int8_t{1});
  EXPECT_EQ(out.headers(), expected);

  EXPECT_EQ(configErrorOf([&] {
              xform->configure({{"value.literal", "1"}});
            }),
            "Missing required configuration \"header\" which has no default value.");
  EXPECT_EQ(configErrorOf([&] {
              xform->configure({{"header", "inserted"}});
            }),
            "Missing required configuration \"value.literal\" which has no default value.");
}

TEST(DropHeadersTest, RemovesEveryHeaderOfTheNames) {
  auto xform = createTransformation("DropHeaders");
  xform->configure({{"headers", "dropped, also-dropped"}});
  Headers headers;
  headers.add("kept", Schema::STRING_SCHEMA, "a");
  headers.add("dropped", Schema::STRING_SCHEMA, "b");
  headers.add("also-dropped", Schema::STRING_SCHEMA, "c");
  headers.add("dropped", Schema::STRING_SCHEMA, "d");
  Headers expected;
  expected.add("kept", Schema::STRING_SCHEMA, "a");
  EXPECT_EQ(xform->apply(recordWithHeaders(headers))->headers(), expected);
  EXPECT_EQ(configErrorOf([&] {
              xform->configure({{"headers", ""}});
            }),
            "Invalid value [] for configuration headers: Empty list");
}

TEST(PredicateTest, TopicNameMatchesHasHeaderKeyAndRecordIsTombstone) {
  auto topic = createPredicate("org.apache.kafka.connect.transforms.predicates.TopicNameMatches");
  topic->configure({{"pattern", "my-prefix-.*"}});
  EXPECT_TRUE(topic->test(ConnectRecord("my-prefix-", 0, nullptr, Value(), nullptr, Value())));
  EXPECT_TRUE(topic->test(ConnectRecord("my-prefix-foo", 0, nullptr, Value(), nullptr, Value())));
  EXPECT_FALSE(topic->test(ConnectRecord("x-my-prefix-", 0, nullptr, Value(), nullptr, Value())));
  EXPECT_EQ(configErrorOf([&] {
              topic->configure({{"pattern", ""}});
            }),
            "Invalid value  for configuration pattern: String must be non-empty");
  EXPECT_EQ(configErrorOf([&] {
              topic->configure({{"pattern", "["}});
            }).rfind("Invalid value [ for configuration pattern: Invalid regex: ", 0),
            0u);

  auto header = createPredicate("HasHeaderKey");
  header->configure({{"name", "foo"}});
  Headers headers;
  headers.add("bar", Schema::STRING_SCHEMA, "x");
  EXPECT_FALSE(header->test(recordWithHeaders(headers)));
  headers.add("foo", Schema::STRING_SCHEMA, "y");
  EXPECT_TRUE(header->test(recordWithHeaders(headers)));
  EXPECT_EQ(configErrorOf([&] {
              header->configure({{"name", ""}});
            }),
            "Invalid value  for configuration name: String must be non-empty");

  auto tombstone = createPredicate("RecordIsTombstone");
  tombstone->configure({});
  EXPECT_TRUE(tombstone->test(ConnectRecord("t", 0, nullptr, Value(), nullptr, Value())));
  EXPECT_FALSE(tombstone->test(recordWithHeaders({})));
}

TEST(RegistryTest, NamesEveryClassAndRefusesUnknownOnes) {
  EXPECT_EQ(transformationClassNames().size(), 26u);
  EXPECT_EQ(predicateClassNames().size(), 3u);
  EXPECT_EQ(configErrorOf([] { createTransformation("com.example.Nope"); }),
            "Invalid value com.example.Nope for configuration type: Class com.example.Nope could "
            "not be found.");
}

TEST(TransformationChainTest, AppliesStagesInOrderWithPredicates) {
  TransformConfig config = {
      {"transforms", "dropTombstones,route,tag"},
      {"transforms.dropTombstones.type", "org.apache.kafka.connect.transforms.Filter"},
      {"transforms.dropTombstones.predicate", "isTombstone"},
      {"transforms.route.type", "org.apache.kafka.connect.transforms.RegexRouter"},
      {"transforms.route.regex", "orders-(.*)"},
      {"transforms.route.replacement", "all-orders"},
      {"transforms.tag.type", "org.apache.kafka.connect.transforms.InsertHeader"},
      {"transforms.tag.header", "routed"},
      {"transforms.tag.value.literal", "true"},
      {"transforms.tag.predicate", "fromOrders"},
      {"transforms.tag.negate", "true"},
      {"predicates", "isTombstone,fromOrders"},
      {"predicates.isTombstone.type",
       "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone"},
      {"predicates.fromOrders.type",
       "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"},
      {"predicates.fromOrders.pattern", "orders-.*"}};
  TransformationChain chain = TransformationChain::fromConnectorConfig(config);
  EXPECT_EQ(chain.size(), 3u);

  EXPECT_FALSE(chain.apply(ConnectRecord("orders-eu", 0, nullptr, Value(), nullptr, Value())));

  // The route runs before the negated predicate is tested: the routed topic no longer matches.
  std::optional<ConnectRecord> routed =
      chain.apply(ConnectRecord("orders-eu", 0, nullptr, Value(), nullptr, "v"));
  ASSERT_TRUE(routed);
  EXPECT_EQ(routed->topic(), "all-orders");
  ASSERT_NE(routed->headers().lastWithName("routed"), nullptr);
  EXPECT_EQ(routed->headers().lastWithName("routed")->value, Value(true));

  // A config of the chain with the predicate not negated: the header goes on matching topics.
  config["transforms"] = "tag";
  config["transforms.tag.negate"] = "false";
  TransformationChain unnegated = TransformationChain::fromConnectorConfig(config);
  EXPECT_NE(unnegated.apply(ConnectRecord("orders-eu", 0, nullptr, Value(), nullptr, "v"))
                ->headers()
                .lastWithName("routed"),
            nullptr);
  EXPECT_EQ(unnegated.apply(ConnectRecord("other", 0, nullptr, Value(), nullptr, "v"))
                ->headers()
                .lastWithName("routed"),
            nullptr);
  chain.close();
}

TEST(TransformationChainTest, ConfigErrors) {
  EXPECT_EQ(TransformationChain::fromConnectorConfig({}).size(), 0u);
  EXPECT_EQ(configErrorOf([] {
              TransformationChain::fromConnectorConfig({{"transforms", "a,a"}});
            }),
            "Invalid value a,a for configuration transforms: Duplicate alias provided.");
  EXPECT_EQ(configErrorOf([] {
              TransformationChain::fromConnectorConfig({{"transforms", "a"}});
            }),
            "Missing required configuration \"transforms.a.type\" which has no default value.");
  EXPECT_EQ(configErrorOf([] {
              TransformationChain::fromConnectorConfig(
                  {{"transforms", "a"}, {"transforms.a.type", "Nope"}});
            }),
            "Invalid value Nope for configuration transforms.a.type: Class Nope could not be "
            "found.");
  EXPECT_EQ(configErrorOf([] {
              TransformationChain::fromConnectorConfig({{"transforms", "a"},
                                                        {"transforms.a.type", "Filter"},
                                                        {"transforms.a.negate", "true"}});
            }),
            "Config 'transforms.a.negate' was provided but there is no config "
            "'transforms.a.predicate' defining a predicate to be negated.");
  EXPECT_EQ(configErrorOf([] {
              TransformationChain::fromConnectorConfig({{"transforms", "a"},
                                                        {"transforms.a.type", "Filter"},
                                                        {"transforms.a.predicate", "p"},
                                                        {"predicates", "p"}});
            }),
            "Missing required configuration \"predicates.p.type\" which has no default value.");
  EXPECT_EQ(
      configErrorOf([] {
        TransformationChain::fromConnectorConfig({{"transforms", "a"},
                                                  {"transforms.a.type", "Filter"},
                                                  {"transforms.a.predicate", "p"},
                                                  {"transforms.a.negate", "maybe"},
                                                  {"predicates", "p"},
                                                  {"predicates.p.type", "RecordIsTombstone"}});
      }),
      "Invalid value maybe for configuration transforms.a.negate: Expected value to be "
      "either true or false");
  EXPECT_EQ(
      configErrorOf([] {
        TransformationChain::fromConnectorConfig({{"transforms", "a"},
                                                  {"transforms.a.type", "Filter"},
                                                  {"transforms.a.predicate", "q"},
                                                  {"predicates", "p"},
                                                  {"predicates.p.type", "RecordIsTombstone"}});
      }),
      "Invalid value q for configuration transforms.a.predicate: Not one of the predicates "
      "in 'predicates'");
  // A transform's own config error surfaces from the chain.
  EXPECT_EQ(configErrorOf([] {
              TransformationChain::fromConnectorConfig(
                  {{"transforms", "a"}, {"transforms.a.type", "HoistField$Value"}});
            }),
            "Missing required configuration \"field\" which has no default value.");
}

}  // namespace
}  // namespace oxbow::connect
