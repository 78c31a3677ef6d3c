#pragma once
// What the store-scan tests share (cursor_test.cpp, window_cursor_test.cpp).
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "oxbow/streams/queryable.h"
#include "streams/state/stores.h"

namespace oxbow::streams::detail::scan_test {

inline const RecordContext kNoContext;
using Rows = std::vector<BytesPair>;
using Model = std::map<std::string, std::string>;

inline Rows drain(std::unique_ptr<KeyValueCursor> cursor) {
  Rows out;
  for (; cursor->valid(); cursor->next()) out.emplace_back(cursor->key(), cursor->value());
  return out;
}

// A query's cursor, through the calls the public headers make.
inline Rows drain(CursorPtr cursor) {
  Rows out;
  for (; cursor_valid(*cursor); cursor_next(*cursor))
    out.emplace_back(cursor_key(*cursor), cursor_value(*cursor));
  return out;
}

// Interactive queries' view of several local stores, read one after another.
class FakeAccess : public StoreAccess {
 public:
  void visit(const std::function<bool(KeyValueStore&)>& read) const override {
    for (auto* store : stores)
      if (!read(*store)) return;
  }
  std::vector<KeyValueStore*> stores;
};

// After a scan that wrote as it went: every entry there before it was seen; `model` becomes what
// the store holds now, flushed.
inline void expect_all_seen_then_reload(CachingStore& cache, const Model& before,
                                        const std::set<std::string>& seen, Model& model) {
  for (const auto& [k, v] : before) EXPECT_TRUE(seen.count(k)) << k;
  cache.flush();
  model.clear();
  for (auto& [k, v] : drain(cache.scan(KeyRange::everything()))) model[k] = v;
}

}  // namespace oxbow::streams::detail::scan_test
