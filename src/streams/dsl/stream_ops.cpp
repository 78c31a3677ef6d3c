// The stateless KStream operations, sources and sinks.
#include <algorithm>
#include <cstring>

#include "streams/dsl/dsl_internal.h"

namespace oxbow::streams::detail {

namespace {

class FunctionProcessor : public Processor {
 public:
  explicit FunctionProcessor(std::shared_ptr<const ProcessFn> fn) : fn_(std::move(fn)) {}
  void process(const Record& record) override { (*fn_)(context(), record); }

 private:
  std::shared_ptr<const ProcessFn> fn_;
};

class SinkProcessor : public Processor {
 public:
  SinkProcessor(std::string topic, bool internal, TopicNameExtractor extractor,
                ProducedOptions options)
      : topic_(std::move(topic)),
        internal_(internal),
        extractor_(std::move(extractor)),
        options_(std::move(options)) {}
  void init(ProcessorContext& context) override {
    Processor::init(context);
    if (internal_) topic_ = context.application_id() + "-" + topic_;
  }
  void process(const Record& r) override {
    auto& ctx = context();
    if (extractor_) dynamic_topic_ = extractor_(r.key, r.value, ctx.record_context());
    const std::string& topic = extractor_ ? dynamic_topic_ : topic_;
    serialize(options_.key_serde, topic, r.key, key_);
    serialize(options_.value_serde, topic, r.value, value_);
    int32_t partition = -1;
    if (options_.partitioner) {
      int32_t n = ctx.collector().partitions_of(topic);
      if (auto p = options_.partitioner(topic, r.key, r.value, n)) partition = *p;
    }
    ctx.collector().send(topic, key_, value_, r.timestamp, r.headers, partition);
  }

 private:
  // Into the sink's own buffers, whose memory the next record reuses.
  static void serialize(const ErasedSerde& serde, const std::string& topic, const Datum& d,
                        std::optional<std::string>& out) {
    if (!d.has_value()) {
      out.reset();
      return;
    }
    if (!out) out.emplace();
    serde.serialize_to(topic, d, *out);
  }

  std::string topic_;
  std::string dynamic_topic_;
  std::optional<std::string> key_, value_;
  bool internal_;
  TopicNameExtractor extractor_;
  ProducedOptions options_;
};

Node stateless(const Node& in, const char* prefix, const std::string& name, ProcessFn fn) {
  return add_processor(in, prefix, name, function_processor(std::move(fn)));
}

void add_sink(const Node& in, const std::string& name, std::string topic, bool internal,
              TopicNameExtractor extractor, ProducedOptions options) {
  auto& graph = *in.graph;
  NodeSpec spec;
  spec.name = graph.name_or_new(name, "KSTREAM-SINK-");
  spec.kind = NodeDescription::Kind::kSink;
  spec.internal = internal;
  spec.dynamic_topic = static_cast<bool>(extractor);
  if (!topic.empty()) spec.topics = {topic};
  spec.parents = {in.name};
  spec.factory = [=] {
    return std::make_unique<SinkProcessor>(topic, internal, extractor, options);
  };
  graph.add_node(std::move(spec));
}

}  // namespace

ProcessorFactory function_processor(ProcessFn fn) {
  auto shared = std::make_shared<const ProcessFn>(std::move(fn));
  return [shared] { return std::make_unique<FunctionProcessor>(shared); };
}

Node add_processor(const Node& in, const std::string& prefix, const std::string& name,
                   ProcessorFactory factory, std::vector<std::string> stores, Flows flows) {
  NodeSpec spec;
  spec.name = in.graph->name_or_new(name, prefix);
  spec.parents = {in.name};
  spec.factory = std::move(factory);
  spec.stores = std::move(stores);
  spec.takes = flows.takes;
  spec.forwards = flows.forwards;
  Node out = in;
  out.name = in.graph->add_node(std::move(spec)).name;
  return out;
}

void require_serde(const ErasedSerde& serde, const std::string& what, const std::string& where) {
  if (!serde)
    throw TopologyException(where + " needs a serde for the " + what +
                            " (its type has no default serde)");
}

Node stream_source(const std::shared_ptr<GraphBuilder>& graph, std::vector<std::string> topics,
                   ConsumedOptions options) {
  NodeSpec spec;
  spec.name = graph->name_or_new(options.name, "KSTREAM-SOURCE-");
  spec.kind = NodeDescription::Kind::kSource;
  spec.topics = topics;
  require_serde(options.key_serde, "key", "source " + spec.name);
  require_serde(options.value_serde, "value", "source " + spec.name);
  spec.consumed = std::move(options);
  Node out;
  out.graph = graph;
  out.name = graph->add_node(std::move(spec)).name;
  out.source_topics = std::move(topics);
  return out;
}

Node filter(const Node& in, Predicate predicate, bool negate, const std::string& name) {
  return stateless(in, "KSTREAM-FILTER-", name, [=](ProcessorContext& c, const Record& r) {
    if (predicate(r.key, r.value) != negate) c.forward(r);
  });
}

Node map(const Node& in, KeyValueMapper mapper, const std::string& name) {
  auto out = stateless(in, "KSTREAM-MAP-", name, [=](ProcessorContext& c, const Record& r) {
    auto [k, v] = mapper(r.key, r.value);
    c.forward(Record{std::move(k), std::move(v), r.timestamp, r.headers});
  });
  out.repartition_required = true;
  return out;
}

Node select_key(const Node& in, KeyMapper mapper, const std::string& name) {
  auto out = stateless(in, "KSTREAM-KEY-SELECT-", name, [=](ProcessorContext& c, const Record& r) {
    c.forward(Record{mapper(r.key, r.value), Datum::lend(r.value), r.timestamp, r.headers});
  });
  out.repartition_required = true;
  return out;
}

Node map_values(const Node& in, ValueMapper mapper, const std::string& name) {
  return stateless(in, "KSTREAM-MAPVALUES-", name, [=](ProcessorContext& c, const Record& r) {
    c.forward(Record{Datum::lend(r.key), mapper(r.key, r.value), r.timestamp, r.headers});
  });
}

Node flat_map(const Node& in, FlatMapper mapper, const std::string& name) {
  auto out = stateless(in, "KSTREAM-FLATMAP-", name, [=](ProcessorContext& c, const Record& r) {
    for (auto& [k, v] : mapper(r.key, r.value))
      c.forward(Record{std::move(k), std::move(v), r.timestamp, r.headers});
  });
  out.repartition_required = true;
  return out;
}

Node flat_map_values(const Node& in, FlatValueMapper mapper, const std::string& name) {
  return stateless(in, "KSTREAM-FLATMAPVALUES-", name, [=](ProcessorContext& c, const Record& r) {
    for (auto& v : mapper(r.key, r.value))
      c.forward(Record{Datum::lend(r.key), std::move(v), r.timestamp, r.headers});
  });
}

Node peek(const Node& in, ForeachAction action, const std::string& name) {
  return stateless(in, "KSTREAM-PEEK-", name, [=](ProcessorContext& c, const Record& r) {
    action(r.key, r.value);
    c.forward(r);
  });
}

void foreach(const Node& in, ForeachAction action, const std::string& name) {
  stateless(in, "KSTREAM-FOREACH-", name,
            [=](ProcessorContext&, const Record& r) { action(r.key, r.value); });
}

Node merge(const Node& a, const Node& b, const std::string& name) {
  if (a.graph != b.graph) throw TopologyException("merge() of streams from different builders");
  auto out = stateless(a, "KSTREAM-MERGE-", name,
                       [](ProcessorContext& c, const Record& r) { c.forward(r); });
  a.graph->connect(b.name, out.name);
  out.repartition_required = a.repartition_required || b.repartition_required;
  out.source_topics.insert(out.source_topics.end(), b.source_topics.begin(), b.source_topics.end());
  return out;
}

std::vector<Node> split(const Node& in, const std::vector<Predicate>& predicates,
                        const std::vector<std::string>& branch_names, bool with_default,
                        const std::string& name) {
  auto& graph = *in.graph;
  std::string split_name = graph.name_or_new(name, "KSTREAM-BRANCH-");
  std::vector<std::string> children;
  for (size_t i = 0; i < predicates.size() + (with_default ? 1 : 0); ++i) {
    bool is_default = i == predicates.size();
    std::string suffix =
        !branch_names[i].empty() ? branch_names[i] : std::to_string(is_default ? 0 : i + 1);
    children.push_back(split_name + suffix);
    graph.new_name(children.back());  // Kafka draws an index for each branch, and leaves it unused
  }
  auto node =
      stateless(in, "KSTREAM-BRANCH-", split_name, [=](ProcessorContext& c, const Record& r) {
        for (size_t i = 0; i < predicates.size(); ++i) {
          if (predicates[i](r.key, r.value)) return c.forward(r, children[i]);
        }
        if (with_default) c.forward(r, children.back());
      });
  std::vector<Node> out;
  for (const auto& child : children) {
    out.push_back(
        stateless(node, "", child, [](ProcessorContext& c, const Record& r) { c.forward(r); }));
  }
  return out;
}

void to(const Node& in, std::string topic, ProducedOptions options) {
  require_serde(options.key_serde, "key", "to(" + topic + ")");
  require_serde(options.value_serde, "value", "to(" + topic + ")");
  add_sink(in, options.name, std::move(topic), false, {}, options);
}

void to(const Node& in, TopicNameExtractor topics, ProducedOptions options) {
  require_serde(options.key_serde, "key", "to(extractor)");
  require_serde(options.value_serde, "value", "to(extractor)");
  add_sink(in, options.name, "", false, std::move(topics), options);
}

namespace {

// Kafka's test for a name it generated (createRepartitionedSource: "KSTREAM.*-[0-9]{10}").
bool generated_name(const std::string& name) {
  if (name.rfind("KSTREAM", 0) != 0 || name.size() < 18) return false;
  size_t digits = name.size() - 10;
  if (name[digits - 1] != '-') return false;
  return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(digits), name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

Node through_topic(const Node& in, const std::string& topic, const std::string& filter_name,
                   const std::string& sink_name, const std::string& source_name, ErasedSerde key,
                   ErasedSerde value, int32_t partitions, StreamPartitioner partitioner) {
  auto& graph = *in.graph;
  require_serde(key, "key", "repartition topic " + topic);
  require_serde(value, "value", "repartition topic " + topic);
  Node upstream = stateless(in, "", filter_name, [](ProcessorContext& c, const Record& r) {
    if (r.key.has_value())
      c.forward(r);
    else
      c.record_dropped("null key before a repartition topic");
  });
  graph.add_internal_topic({topic, partitions, in.source_topics});
  ProducedOptions produced{key, value, std::move(partitioner), sink_name};
  add_sink(upstream, sink_name, topic, true, {}, produced);
  return add_internal_source(in, source_name, topic, key, value);
}

}  // namespace

void add_internal_sink(const Node& in, const std::string& name, const std::string& topic,
                       ProducedOptions options) {
  add_sink(in, name, topic, true, {}, std::move(options));
}

Node add_internal_source(const Node& like, const std::string& name, const std::string& topic,
                         ErasedSerde key, ErasedSerde value, ChangeReader read_change) {
  NodeSpec source;
  source.name = name;
  source.kind = NodeDescription::Kind::kSource;
  source.topics = {topic};
  source.internal = true;
  if (read_change) source.forwards = Flow::kChanges;
  source.read_change = std::move(read_change);
  source.consumed.key_serde = key;
  source.consumed.value_serde = std::move(value);
  Node out = like;
  out.name = like.graph->add_node(std::move(source)).name;
  out.repartition_required = false;
  out.key_serde = std::move(key);
  out.source_topics = {topic};
  return out;
}

Node through_repartition_topic(const Node& in, const std::string& base, ErasedSerde key,
                               ErasedSerde value, int32_t partitions,
                               StreamPartitioner partitioner) {
  auto& graph = *in.graph;
  std::string topic = base + "-repartition";
  std::string sink_name = graph.new_name("KSTREAM-SINK-");
  std::string filter_name = graph.new_name("KSTREAM-FILTER-");
  std::string source_name = graph.new_name("KSTREAM-SOURCE-");
  if (!generated_name(base)) {
    filter_name = topic + "-filter";
    sink_name = topic + "-sink";
    source_name = topic + "-source";
  }
  return through_topic(in, topic, filter_name, sink_name, source_name, std::move(key),
                       std::move(value), partitions, std::move(partitioner));
}

Node repartition(const Node& in, RepartitionedOptions options) {
  std::string base =
      options.name.empty() ? in.graph->new_name("KSTREAM-REPARTITION-") : options.name;
  auto out = through_repartition_topic(in, base, options.key_serde, options.value_serde,
                                       options.partitions, options.partitioner);
  out.value_serde = options.value_serde;
  return out;
}

}  // namespace oxbow::streams::detail
