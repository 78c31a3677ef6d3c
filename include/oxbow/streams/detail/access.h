#pragma once
// The library's way into the public classes: KStream, KTable, their grouped and windowed forms,
// Topology and the parameter objects (Consumed, Materialized, ...) keep the graph nodes and
// options they carry private, so an application sees only Kafka's API; the DSL's templates and
// the library reach them through here.
#include <memory>
#include <string>
#include <utility>

namespace oxbow::streams::detail {

struct Access {
  template <class T>
  static const auto& options(const T& shell) {
    return shell.options();
  }
  template <class T>
  static const auto& node(const T& shell) {
    return shell.node();
  }
  template <class T>
  static const auto& grouping(const T& shell) {
    return shell.grouping();
  }
  template <class T>
  static const auto& graph(const T& topology) {
    return topology.graph();
  }
  // A test driver's store: its serdes and layers.
  template <class T>
  static const auto& store_options(const T& driver, const std::string& store) {
    return driver.storeOptions(store);
  }
  template <class T, class... Args>
  static T make(Args&&... args) {
    return T(std::forward<Args>(args)...);
  }
  // A processor's record lending it the key and value the topology holds (api::Record's).
  template <class T, class... Args>
  static T lent(Args&&... args) {
    return T(typename T::Lent{}, std::forward<Args>(args)...);
  }
  template <class T, class... Args>
  static std::unique_ptr<T> make_unique(Args&&... args) {
    return std::unique_ptr<T>(new T(std::forward<Args>(args)...));
  }
};

template <class T>
const auto& options_of(const T& shell) {
  return Access::options(shell);
}
// A stream's or table's graph node.
template <class T>
const auto& node_of(const T& shell) {
  return Access::node(shell);
}
template <class T>
const auto& grouping_of(const T& shell) {
  return Access::grouping(shell);
}
template <class T>
const auto& graph_of(const T& topology) {
  return Access::graph(topology);
}
// A public shell around what the DSL built (a node, a grouping, ...).
template <class T, class... Args>
T shell(Args&&... args) {
  return Access::make<T>(std::forward<Args>(args)...);
}

}  // namespace oxbow::streams::detail
