// The Processor API's nodes: a user's processor run through the task's context, and the calls
// that build a topology by hand.
#include "oxbow/streams/detail/user_processor.h"

#include "oxbow/streams/errors.h"
#include "streams/dsl/dsl_internal.h"

namespace oxbow::streams::detail {

namespace {

// What a user processor sees of the task, over the node's ProcessorContext.
class UserContextImpl : public UserContext {
 public:
  UserContextImpl(ProcessorContext& context, std::vector<std::string> stores,
                  std::shared_ptr<const GraphBuilder> graph)
      : context_(context), stores_(std::move(stores)), graph_(std::move(graph)) {}
  void forward(const Record& record) override { context_.forward(record); }
  void forward(const Record& record, const std::string& child) override {
    context_.forward(record, child);
  }
  Cancellable schedule(int64_t interval_ms, PunctuationType type,
                       std::function<void(int64_t)> punctuator) override {
    return Cancellable(context_.schedule(interval_ms, type == PunctuationType::WALL_CLOCK_TIME,
                                         std::move(punctuator)));
  }
  void commit() override { context_.request_commit(); }
  std::optional<RecordMetadata> recordMetadata() const override {
    const auto& rc = context_.record_context();
    if (rc.topic.empty()) return std::nullopt;
    return RecordMetadata{std::string(rc.topic), rc.partition, rc.offset};
  }
  Headers headers() const override {
    const auto& rc = context_.record_context();
    return rc.headers ? *rc.headers : Headers{};
  }
  int64_t timestamp() const override { return context_.record_context().timestamp; }
  int64_t currentStreamTimeMs() const override { return context_.stream_time(); }
  int64_t currentSystemTimeMs() const override { return context_.wall_clock_ms(); }
  const std::string& applicationId() const override { return context_.application_id(); }
  TaskId taskId() const override {
    return TaskId{context_.task_subtopology(), context_.task_partition(), context_.task_topology()};
  }
  KeyValueStore& store(const std::string& name) override {
    // Global stores are every processor's to read, as in Kafka; others must be connected.
    const StoreSpec* spec = graph_->store(name);
    bool global =
        spec && !spec->source_topic.empty() && graph_->global_table_of(spec->source_topic);
    if (!global && std::find(stores_.begin(), stores_.end(), name) == stores_.end())
      throw TopologyException("the processor was not connected to the store " + name +
                              " (name it in process() or addStateStore())");
    return context_.store(name);
  }
  const StoreOptions& store_options(const std::string& name) const override {
    const StoreSpec* spec = graph_->store(name);
    if (!spec) throw TopologyException("no store named " + name);
    return spec->options;
  }

 private:
  ProcessorContext& context_;
  std::vector<std::string> stores_;
  std::shared_ptr<const GraphBuilder> graph_;
};

class UserProcessorNode : public Processor {
 public:
  UserProcessorNode(std::unique_ptr<UserProcessor> processor, std::vector<std::string> stores,
                    std::shared_ptr<const GraphBuilder> graph)
      : processor_(std::move(processor)), stores_(std::move(stores)), graph_(std::move(graph)) {}
  void init(ProcessorContext& context) override {
    Processor::init(context);
    user_context_ = std::make_unique<UserContextImpl>(context, stores_, graph_);
    processor_->init(*user_context_);
  }
  void process(const Record& record) override { processor_->process(record); }
  void close() override { processor_->close(); }

 private:
  std::unique_ptr<UserProcessor> processor_;
  std::vector<std::string> stores_;
  std::shared_ptr<const GraphBuilder> graph_;
  std::unique_ptr<UserContextImpl> user_context_;
};

}  // namespace

std::unique_ptr<UserContext> make_user_context(ProcessorContext& context,
                                               std::vector<std::string> stores,
                                               std::shared_ptr<const GraphBuilder> graph) {
  return std::make_unique<UserContextImpl>(context, std::move(stores), std::move(graph));
}

namespace {

ProcessorFactory node_factory(UserProcessorFactory factory, std::vector<std::string> stores,
                              std::weak_ptr<GraphBuilder> graph) {
  return [factory = std::move(factory), stores = std::move(stores), graph] {
    return std::make_unique<UserProcessorNode>(factory(), stores, graph.lock());
  };
}

}  // namespace

Node user_process(const Node& in, UserProcessorFactory factory, std::vector<std::string> stores,
                  const std::string& name, bool fixed_key) {
  for (const auto& s : stores)
    if (!in.graph->store(s))
      throw TopologyException("no store named " + s + ": add it with addStateStore() first");
  Node out = add_processor(in, fixed_key ? "KSTREAM-PROCESSVALUES-" : "KSTREAM-PROCESSOR-", name,
                           node_factory(std::move(factory), stores, in.graph), stores);
  out.store.clear();
  out.lookup = nullptr;
  out.window_grace_ms = -1;
  out.send_old_values = nullptr;
  if (!fixed_key) out.repartition_required = true;
  return out;
}

void add_state_store(const std::shared_ptr<GraphBuilder>& graph, StoreOptions store) {
  if (store.name.empty()) throw TopologyException("a state store needs a name");
  require_serde(store.key_serde, "key", "store " + store.name);
  require_serde(store.value_serde, "value", "store " + store.name);
  std::string name = store.name;
  graph->add_store({name, std::move(store), ""});
}

void connect_store(const std::shared_ptr<GraphBuilder>& graph, const std::string& processor,
                   const std::string& store) {
  graph->connect_store(processor, store);
}

void add_source(const std::shared_ptr<GraphBuilder>& graph, const std::string& name,
                std::vector<std::string> topics, ErasedSerde key, ErasedSerde value) {
  if (name.empty()) throw TopologyException("a source needs a name");
  ConsumedOptions consumed;
  consumed.name = name;
  consumed.key_serde = std::move(key);
  consumed.value_serde = std::move(value);
  stream_source(graph, std::move(topics), std::move(consumed));
}

void add_user_processor(const std::shared_ptr<GraphBuilder>& graph, const std::string& name,
                        UserProcessorFactory factory, const std::vector<std::string>& parents) {
  if (name.empty()) throw TopologyException("a processor needs a name");
  if (parents.empty()) throw TopologyException("processor " + name + " needs a parent");
  NodeSpec spec;
  spec.name = name;
  spec.parents = parents;
  // The node's stores are connected afterwards; the factory reads them when a task starts.
  std::weak_ptr<GraphBuilder> weak = graph;
  spec.factory = [factory = std::move(factory), weak, name]() -> std::unique_ptr<Processor> {
    auto g = weak.lock();
    return std::make_unique<UserProcessorNode>(factory(), g->node(name).stores, g);
  };
  graph->add_node(std::move(spec));
}

void add_sink(const std::shared_ptr<GraphBuilder>& graph, const std::string& name,
              const std::string& topic, ErasedSerde key, ErasedSerde value,
              const std::vector<std::string>& parents) {
  if (name.empty()) throw TopologyException("a sink needs a name");
  if (parents.empty()) throw TopologyException("sink " + name + " needs a parent");
  Node first;
  first.graph = graph;
  first.name = parents.front();
  ProducedOptions produced;
  produced.key_serde = std::move(key);
  produced.value_serde = std::move(value);
  produced.name = name;
  to(first, topic, std::move(produced));
  for (size_t i = 1; i < parents.size(); ++i) graph->connect(parents[i], name);
}

void add_global_store(const std::shared_ptr<GraphBuilder>& graph, StoreOptions store,
                      const std::string& source_name, const std::string& topic, ErasedSerde key,
                      ErasedSerde value, const std::string& processor_name,
                      UserProcessorFactory factory) {
  if (store.name.empty()) throw TopologyException("a global store needs a name");
  if (store.logging)
    throw TopologyException("StoreBuilder for global store " + store.name +
                            " must have logging disabled: its topic is its changelog");
  if (source_name.empty() || processor_name.empty())
    throw TopologyException("a global store needs a source name and a processor name");
  require_serde(key, "key", "global store " + store.name);
  require_serde(value, "value", "global store " + store.name);
  if (graph->global_table_of(topic) || graph->store(store.name))
    throw TopologyException("topic " + topic + " or store " + store.name + " is already used");
  ConsumedOptions consumed;
  consumed.name = source_name;
  consumed.key_serde = std::move(key);
  consumed.value_serde = std::move(value);
  std::string name = store.name;
  graph->add_store({name, std::move(store), topic});
  graph->add_global_table(
      {topic, name, std::move(consumed), std::move(factory), source_name, processor_name});
}

std::shared_ptr<GraphBuilder> new_graph() {
  return std::make_shared<GraphBuilder>();
}

}  // namespace oxbow::streams::detail
