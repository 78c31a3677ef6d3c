#include "streams/topology/kafka_description.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <string>

namespace oxbow::streams::detail {

namespace {

// Kafka's description (Kafka 3.x, InternalTopologyBuilder#describe and TopologyDescription's
// toString, as run on JDK 8 to 17) shows a few JDK behaviours: String.hashCode and compareTo over
// UTF-16 code units, the iteration order of java.util.HashMap and HashSet, and the red-black tree
// of java.util.TreeSet. What follows re-creates those, from their documented algorithms, only as
// far as the description needs.

std::u16string java_string(const std::string& utf8) {
  std::u16string out;
  for (size_t i = 0; i < utf8.size();) {
    auto c = static_cast<unsigned char>(utf8[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > utf8.size()) {
      out.push_back(u'\ufffd');
      ++i;
      continue;
    }
    uint32_t cp = len == 1 ? c : c & (0x7fu >> len);
    for (size_t k = 1; k < len; ++k)
      cp = cp << 6 | (static_cast<unsigned char>(utf8[i + k]) & 0x3f);
    i += len;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out.push_back(static_cast<char16_t>(0xd800 + (cp >> 10)));
      out.push_back(static_cast<char16_t>(0xdc00 + (cp & 0x3ff)));
    } else {
      out.push_back(static_cast<char16_t>(cp));
    }
  }
  return out;
}

uint32_t java_hash(const std::u16string& s) {
  uint32_t h = 0;
  for (char16_t c : s) h = 31 * h + c;
  return h;
}

// The table size of `new HashSet<>(collection)` for a collection of n (JDK 8 to 18).
size_t java_copy_capacity(size_t n) {
  size_t wanted = std::max<size_t>(static_cast<size_t>(static_cast<float>(n) / 0.75f) + 1, 16);
  size_t capacity = 1;
  while (capacity < wanted) capacity *= 2;
  return capacity;
}

// The order a HashMap (or HashSet) starting with `capacity` buckets iterates keys with these hash
// codes, put in this order: by bucket, and within a bucket by insertion (growing the table keeps
// that order). A bucket of more than 8 in a table of 64 or more becomes a tree, whose order this
// does not model; it takes dozens of names colliding.
std::vector<size_t> java_hash_order(const std::vector<uint32_t>& hashes, size_t capacity) {
  auto spread = [&](size_t k) { return hashes[k] ^ (hashes[k] >> 16); };
  std::vector<std::vector<size_t>> table(capacity);
  size_t threshold = capacity * 3 / 4;
  auto grow = [&] {
    std::vector<std::vector<size_t>> bigger(table.size() * 2);
    for (const auto& bucket : table)
      for (size_t k : bucket) bigger[spread(k) & (bigger.size() - 1)].push_back(k);
    table = std::move(bigger);
    threshold *= 2;
  };
  for (size_t k = 0; k < hashes.size(); ++k) {
    auto& bucket = table[spread(k) & (table.size() - 1)];
    bucket.push_back(k);
    if (bucket.size() > 8 && table.size() < 64) grow();  // a small table grows instead of a tree
    if (k + 1 > threshold) grow();
  }
  std::vector<size_t> order;
  for (const auto& bucket : table) order.insert(order.end(), bucket.begin(), bucket.end());
  return order;
}

// Names in the order a HashSet of `capacity` buckets, filled in the given order, iterates them;
// then `copies` times copied with new HashSet<>(set), as Kafka's node factories copy their stores.
std::vector<std::string> java_hash_set(const std::vector<std::string>& names, size_t capacity,
                                       int copies) {
  std::vector<std::string> items;
  for (const auto& n : names)
    if (std::find(items.begin(), items.end(), n) == items.end()) items.push_back(n);
  auto reorder = [&](size_t capacity) {
    std::vector<uint32_t> hashes;
    for (const auto& n : items) hashes.push_back(java_hash(java_string(n)));
    std::vector<std::string> out;
    for (size_t k : java_hash_order(hashes, capacity)) out.push_back(items[k]);
    items = std::move(out);
  };
  reorder(capacity);
  for (int i = 0; i < copies; ++i) reorder(java_copy_capacity(items.size()));
  return items;
}

// A TreeSet's insertion: a plain search down from the root, then the textbook red-black recolouring
// and rotations. Kafka's node sets compare nodes by sub-tree sizes that keep changing after the
// nodes are in a set, so the order such a set iterates depends on the shape of its tree.
class JavaTreeSet {
 public:
  // compare(a, b) < 0 when a goes before b; 0 when they are the same.
  template <class Compare>
  void insert(int item, const Compare& compare) {
    int parent = -1, at = root_, cmp = 0;
    while (at >= 0) {
      parent = at;
      cmp = compare(item, e_[at].item);
      if (cmp == 0) return;
      at = cmp < 0 ? e_[at].left : e_[at].right;
    }
    int x = static_cast<int>(e_.size());
    e_.push_back(Entry{item, -1, -1, parent, true});
    items_.push_back(item);
    if (parent < 0) {
      root_ = x;
    } else {
      (cmp < 0 ? e_[parent].left : e_[parent].right) = x;
    }
    rebalance(x);
  }
  // Members in the order they were added (for visiting them all, in no particular order).
  const std::vector<int>& items() const { return items_; }
  // Members in the order the set iterates them.
  std::vector<int> in_order() const {
    std::vector<int> out, stack;
    for (int at = root_; at >= 0 || !stack.empty();) {
      if (at >= 0) {
        stack.push_back(at);
        at = e_[at].left;
      } else {
        at = stack.back();
        stack.pop_back();
        out.push_back(e_[at].item);
        at = e_[at].right;
      }
    }
    return out;
  }

 private:
  struct Entry {
    int item;
    int left, right, parent;
    bool red;
  };
  bool red(int x) const { return x >= 0 && e_[x].red; }
  void rotate(int x, bool to_left) {
    int y = to_left ? e_[x].right : e_[x].left;
    int inner = to_left ? e_[y].left : e_[y].right;
    (to_left ? e_[x].right : e_[x].left) = inner;
    if (inner >= 0) e_[inner].parent = x;
    int up = e_[x].parent;
    e_[y].parent = up;
    if (up < 0) {
      root_ = y;
    } else {
      (e_[up].left == x ? e_[up].left : e_[up].right) = y;
    }
    (to_left ? e_[y].left : e_[y].right) = x;
    e_[x].parent = y;
  }
  void rebalance(int x) {
    while (x != root_ && red(e_[x].parent)) {
      int p = e_[x].parent, g = e_[p].parent;
      bool parent_is_left = e_[g].left == p;
      int uncle = parent_is_left ? e_[g].right : e_[g].left;
      if (red(uncle)) {
        e_[p].red = e_[uncle].red = false;
        e_[g].red = true;
        x = g;
        continue;
      }
      if (x == (parent_is_left ? e_[p].right : e_[p].left)) {
        x = p;
        rotate(x, parent_is_left);
      }
      p = e_[x].parent;
      g = e_[p].parent;
      e_[p].red = false;
      e_[g].red = true;
      rotate(g, !parent_is_left);
    }
    e_[root_].red = false;
  }
  std::vector<Entry> e_;
  std::vector<int> items_;
  int root_ = -1;
};

}  // namespace

// One sub-topology as Kafka describes it. Kafka gives each node a size, the number of paths from
// it downstream (itself included), grown edge by edge as it links the nodes, visiting them in
// the order of a HashMap by name; nodes are listed by size, largest first, then by name, and each
// node's successors and predecessors are sets with that same order, but compared with the sizes
// of the moment each was added.
SubtopologyDescription describe_subtopology(const std::vector<NodeSpec>& all,
                                            const Subtopology& sub) {
  const size_t n = sub.nodes.size();
  std::map<std::string, int> local;
  std::vector<std::u16string> names;
  std::vector<uint32_t> hashes;
  for (size_t l = 0; l < n; ++l) {
    const auto& name = all[sub.nodes[l]].name;
    local[name] = static_cast<int>(l);
    names.push_back(java_string(name));
    hashes.push_back(java_hash(names.back()));
  }
  // The sub-topology's HashSet of names is filled in topology order (Kafka's node factories are a
  // LinkedHashMap; ours are kept in the same, creation, order), and the HashMap of nodes from it.
  std::vector<size_t> set_order = java_hash_order(hashes, 16);
  std::vector<uint32_t> set_hashes;
  for (size_t k : set_order) set_hashes.push_back(hashes[k]);
  std::vector<size_t> visit;
  for (size_t k : java_hash_order(set_hashes, 16)) visit.push_back(set_order[k]);

  std::vector<uint32_t> size(n, 1);  // Java int arithmetic: wraps
  auto compare = [&](int a, int b) {
    if (a == b) return 0;
    auto diff = static_cast<int32_t>(size[b] - size[a]);
    if (diff != 0) return diff;
    return names[a].compare(names[b]);
  };
  std::vector<JavaTreeSet> preds(n), succs(n);
  auto grow = [&](auto& self, int x, uint32_t delta) -> void {
    size[x] += delta;
    for (int p : preds[x].items()) self(self, p, delta);
  };
  for (size_t l : visit) {
    auto child = static_cast<int>(l);
    for (const auto& parent_name : all[sub.nodes[l]].parents) {
      int parent = local.at(parent_name);
      preds[child].insert(parent, compare);
      succs[parent].insert(child, compare);
      grow(grow, parent, size[child]);
    }
  }

  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return compare(a, b) < 0; });
  SubtopologyDescription d;
  d.id = sub.id;
  auto names_of = [&](const JavaTreeSet& set) {
    std::vector<std::string> out;
    for (int k : set.in_order()) out.push_back(all[sub.nodes[k]].name);
    return out;
  };
  for (int l : order) {
    const auto& spec = all[sub.nodes[l]];
    NodeDescription nd;
    nd.kind = spec.kind;
    nd.name = spec.name;
    switch (spec.kind) {
      case NodeDescription::Kind::kSource:
        // new HashSet<>(topics) of the source's list
        nd.topics = java_hash_set(spec.topics, java_copy_capacity(spec.topics.size()), 0);
        break;
      case NodeDescription::Kind::kProcessor:
        nd.stores = java_hash_set(spec.stores, 16, 1);  // a HashSet, copied
        break;
      case NodeDescription::Kind::kSink:
        nd.topics = spec.topics;
        break;
    }
    nd.successors = names_of(succs[l]);
    nd.predecessors = names_of(preds[l]);
    d.nodes.push_back(std::move(nd));
  }
  return d;
}

}  // namespace oxbow::streams::detail
