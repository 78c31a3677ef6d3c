#pragma once
// Records as processors see them, with their keys and values type-erased.
//
// The DSL's typed operations (KStream<K,V>::filter, ...) are thin templates over an untyped core
// that moves Datum values: a key or value of any copyable type, or nothing for null. That keeps
// compile times low and lets a topology be composed at run time, with serdes chosen at run time.
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "oxbow/streams/datum.h"
#include "oxbow/streams/serde.h"
#include "oxbow/streams/windows.h"

namespace oxbow::streams {

struct Header {
  std::string key;
  std::optional<std::string> value;
  bool operator==(const Header&) const = default;
};
using Headers = std::vector<Header>;

struct Record {
  Datum key;
  Datum value;
  int64_t timestamp = 0;
  Headers headers;
};

// Where the record being processed came from (Kafka's RecordMetadata / ProcessorContext topic(),
// partition(), offset()). Records made by punctuators or caches have no topic (empty) and offset
// -1. The topic's name is the task's own, valid as long as the task (copy it to keep it longer).
struct RecordContext {
  std::string_view topic;
  int32_t partition = -1;
  int64_t offset = -1;
  int64_t timestamp = 0;
  const Headers* headers = nullptr;
};

template <class K, class V>
struct KeyValue {
  K key;
  V value;
};

// A KTable update: the key's new value and the one it replaces; either may be null.
struct Change {
  Datum new_value;
  Datum old_value;
};

namespace detail {

[[noreturn]] void throw_type_mismatch(const std::type_info& wanted, const std::type_info& held);

// A windowed key in the untyped core: the key's Datum and its window. Typed code sees it as
// Windowed<K>; the core (and a topology composed at run time) builds and reads it without K.
struct WindowedDatum {
  Datum key;
  Window window;
};

template <class T>
struct DatumView {
  static const T& get(const Datum& d) {
    if (!d.has_value()) {
      static const T empty{};
      return empty;
    }
    if (const T* p = datum_cast<T>(&d)) return *p;
    throw_type_mismatch(typeid(T), d.type());
  }
};
template <class K>
struct DatumView<Windowed<K>> {
  static Windowed<K> get(const Datum& d) {
    if (!d.has_value()) return {};
    if (const auto* w = datum_cast<WindowedDatum>(&d))
      return Windowed<K>{K(DatumView<K>::get(w->key)), w->window};
    if (const auto* w = datum_cast<Windowed<K>>(&d)) return *w;
    throw_type_mismatch(typeid(Windowed<K>), d.type());
  }
};

// The typed view of a Datum. A null Datum reads as a value-initialized T: typed stream operations
// over a non-nullable type see null as T{} (use std::optional<T> as the type to see nulls).
// A reference into the Datum, but a value for a windowed key (made from its WindowedDatum).
template <class T>
decltype(auto) as(const Datum& d) {
  return DatumView<T>::get(d);
}

template <class T>
struct IsWindowed : std::false_type {};
template <class K>
struct IsWindowed<Windowed<K>> : std::true_type {};

// The Datum of a typed value. A Void is null: Kafka's Void has no value but null, and a record
// whose key is a Void is a record without a key (its serde writes no bytes). A windowed key
// becomes a WindowedDatum.
template <class T>
Datum to_datum(T&& value) {
  using U = std::decay_t<T>;
  if constexpr (std::is_same_v<U, Void>)
    return Datum();
  else if constexpr (IsWindowed<U>::value)
    return Datum(WindowedDatum{to_datum(value.key), value.window});
  else
    return Datum(std::forward<T>(value));
}

// A serde over Datum, made from a typed one; null passes through as null.
struct ErasedSerde {
  std::function<std::string(std::string_view topic, const Datum&)> serialize;
  std::function<Datum(std::string_view topic, std::string_view bytes)> deserialize;
  std::string name;
  // The typed serde's T when made by erase(); null for one made at run time.
  const std::type_info* type = nullptr;
  // Optional (Serde<T>'s of the same names): into a buffer or a Datum reused from call to call.
  std::function<void(std::string_view topic, const Datum&, std::string& out)> serialize_into;
  std::function<void(std::string_view topic, std::string_view bytes, Datum& out)> deserialize_into;
  explicit operator bool() const { return serialize && deserialize; }

  // What the record path calls: the into-forms where the serde has them.
  void serialize_to(std::string_view topic, const Datum& d, std::string& out) const {
    if (serialize_into)
      serialize_into(topic, d, out);
    else
      out = serialize(topic, d);
  }
  void deserialize_to(std::string_view topic, std::string_view bytes, Datum& out) const {
    if (deserialize_into)
      deserialize_into(topic, bytes, out);
    else
      out = deserialize(topic, bytes);
  }
};

template <class T>
ErasedSerde erase(Serde<T> serde) {
  if (!serde) return {};
  ErasedSerde out;
  out.name = serde.name;
  out.type = &typeid(T);
  out.serialize = [s = serde.serialize](std::string_view topic, const Datum& d) {
    return s(topic, as<T>(d));
  };
  out.deserialize = [s = serde.deserialize](std::string_view topic, std::string_view bytes) {
    return to_datum(s(topic, bytes));
  };
  if (serde.serialize_into)
    out.serialize_into = [s = serde.serialize_into](std::string_view topic, const Datum& d,
                                                    std::string& bytes) {
      s(topic, as<T>(d), bytes);
    };
  if constexpr (!std::is_same_v<T, Void> && !IsWindowed<T>::value) {
    if (serde.deserialize_into)
      out.deserialize_into = [s = serde.deserialize_into](std::string_view topic,
                                                          std::string_view bytes, Datum& d) {
        T* held = d.owned_if<T>();
        s(topic, bytes, held ? *held : d.emplace<T>());
      };
  }
  return out;
}

template <class T>
ErasedSerde default_serde() {
  return erase(DefaultSerde<T>::get());
}

}  // namespace detail
}  // namespace oxbow::streams
