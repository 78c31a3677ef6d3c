#pragma once
// Datum: a key or value of any copyable type, or nothing for null, as records carry them through a
// topology's untyped core.
//
// Unlike std::any (which libstdc++ boxes on the heap for anything larger than a pointer), a Datum
// keeps values of up to 32 bytes inline: an int64, a double, a std::string (whose own buffer
// holds up to 15 characters), a window. Larger values are boxed. A Datum may also *borrow* a value
// it does not own (Datum::borrow): a source lends the key and value it deserialized into buffers
// it reuses, so that a record read, mapped and written needs no allocation of ours beyond what the
// map makes. Copying a borrowed Datum copies the value into one that owns it, so whatever a node
// keeps past the call it was given the record in is its own; moving it moves the loan.
#include <cstddef>
#include <new>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace oxbow::streams {

class Datum {
 public:
  Datum() noexcept {}  // NOLINT: user-provided, so that a const Datum may be default-made
  template <class T, class U = std::decay_t<T>,
            class = std::enable_if_t<!std::is_same_v<U, Datum> && std::is_copy_constructible_v<U>>>
  Datum(T&& value) {  // NOLINT(google-explicit-constructor): as std::any's
    emplace<U>(std::forward<T>(value));
  }
  Datum(const Datum& other) {
    if (other.ops_) other.ops_->copy(other, *this);
  }
  Datum(Datum&& other) noexcept {
    if (other.ops_) other.ops_->move(other, *this);
  }
  Datum& operator=(const Datum& other) {
    if (this != &other) {
      Datum copy(other);
      *this = std::move(copy);
    }
    return *this;
  }
  Datum& operator=(Datum&& other) noexcept {
    if (this != &other) {
      reset();
      if (other.ops_) other.ops_->move(other, *this);
    }
    return *this;
  }
  template <class T, class U = std::decay_t<T>,
            class = std::enable_if_t<!std::is_same_v<U, Datum> && std::is_copy_constructible_v<U>>>
  Datum& operator=(T&& value) {
    if (U* held = owned_if<U>()) {
      *held = std::forward<T>(value);  // keeps the held value's buffers
    } else {
      reset();
      emplace<U>(std::forward<T>(value));
    }
    return *this;
  }
  ~Datum() { reset(); }

  // A Datum referring to `value`, which must outlive it and every move of it.
  template <class T>
  static Datum borrow(const T& value) {
    Datum d;
    d.storage_.pointer = const_cast<T*>(&value);
    d.ops_ = &kBorrowedOps<T>;
    return d;
  }
  // A Datum referring to what `owner` holds (null for null), under the same terms: how a node
  // passes on a key or value it was given without copying it.
  static Datum lend(const Datum& owner) noexcept {
    Datum d;
    if (!owner.ops_) return d;
    d.storage_.pointer = const_cast<void*>(owner.address());
    d.ops_ = owner.ops_->borrowed ? owner.ops_->borrowed : owner.ops_;
    return d;
  }

  bool has_value() const noexcept { return ops_ != nullptr; }
  const std::type_info& type() const noexcept { return ops_ ? ops_->type : typeid(void); }
  bool borrowed() const noexcept { return ops_ && ops_->mode == Mode::kBorrowed; }
  void reset() noexcept {
    if (ops_) ops_->destroy(*this);
    ops_ = nullptr;
  }

  // The value as a T, or null when the Datum is null or holds another type.
  template <class T>
  const T* get_if() const noexcept {
    if (!ops_ || !holds<T>()) return nullptr;
    return static_cast<const T*>(address());
  }
  // The value as a T to change, or null when the Datum does not own a T (a borrowed value is
  // read-only).
  template <class T>
  T* owned_if() noexcept {
    if (!ops_ || ops_->mode == Mode::kBorrowed || !holds<T>()) return nullptr;
    return const_cast<T*>(static_cast<const T*>(address()));
  }

  // Constructs a T in place, replacing what was held.
  template <class T, class... Args>
  T& emplace(Args&&... args) {
    reset();
    if constexpr (kFitsInline<T>) {
      T* p = ::new (static_cast<void*>(storage_.bytes)) T(std::forward<Args>(args)...);
      ops_ = &kInlineOps<T>;
      return *p;
    } else {
      T* p = new T(std::forward<Args>(args)...);
      storage_.pointer = p;
      ops_ = &kBoxedOps<T>;
      return *p;
    }
  }

 private:
  enum class Mode : unsigned char { kInline, kBoxed, kBorrowed };
  struct Ops {
    const std::type_info& type;
    Mode mode;
    void (*copy)(const Datum& from, Datum& to);     // to is empty
    void (*move)(Datum& from, Datum& to) noexcept;  // to is empty; from left empty
    void (*destroy)(Datum& self) noexcept;
    const Ops* borrowed;  // the same type's ops for a borrowed value (null: these are)
  };

  static constexpr size_t kInlineSize = 32;
  template <class T>
  static constexpr bool kFitsInline =
      sizeof(T) <= kInlineSize &&
      alignof(T) <= alignof(std::max_align_t) && std::is_nothrow_move_constructible_v<T>;

  template <class T>
  bool holds() const noexcept {
    // The ops tables are per type, but a type's tables may be duplicated across shared objects:
    // fall back to the type's identity.
    return ops_ == &kInlineOps<T> || ops_ == &kBoxedOps<T> || ops_ == &kBorrowedOps<T> ||
           ops_->type == typeid(T);
  }

  const void* address() const noexcept {
    return ops_->mode == Mode::kInline ? static_cast<const void*>(storage_.bytes)
                                       : storage_.pointer;
  }
  template <class T>
  const T& value_of() const noexcept {
    return *static_cast<const T*>(address());
  }

  template <class T>
  static void copy_value(const Datum& from, Datum& to) {
    to.emplace<T>(from.value_of<T>());
  }
  template <class T>
  static void move_inline(Datum& from, Datum& to) noexcept {
    T& value = *std::launder(reinterpret_cast<T*>(from.storage_.bytes));
    ::new (static_cast<void*>(to.storage_.bytes)) T(std::move(value));
    value.~T();
    to.ops_ = from.ops_;
    from.ops_ = nullptr;
  }
  static void move_pointer(Datum& from, Datum& to) noexcept {
    to.storage_.pointer = from.storage_.pointer;
    to.ops_ = from.ops_;
    from.ops_ = nullptr;
  }
  template <class T>
  static void destroy_inline(Datum& self) noexcept {
    std::launder(reinterpret_cast<T*>(self.storage_.bytes))->~T();
  }
  template <class T>
  static void destroy_boxed(Datum& self) noexcept {
    delete static_cast<T*>(self.storage_.pointer);
  }
  static void forget(Datum&) noexcept {}

  template <class T>
  static constexpr Ops kBorrowedOps{typeid(T),     Mode::kBorrowed, &copy_value<T>,
                                    &move_pointer, &forget,         nullptr};
  template <class T>
  static constexpr Ops kInlineOps{typeid(T),       Mode::kInline,      &copy_value<T>,
                                  &move_inline<T>, &destroy_inline<T>, &kBorrowedOps<T>};
  template <class T>
  static constexpr Ops kBoxedOps{typeid(T),     Mode::kBoxed,      &copy_value<T>,
                                 &move_pointer, &destroy_boxed<T>, &kBorrowedOps<T>};

  union Storage {
    void* pointer;
    alignas(std::max_align_t) unsigned char bytes[kInlineSize];
  } storage_;
  const Ops* ops_ = nullptr;
};

// std::any_cast's counterparts, read-only: the pointer form returns null on a mismatch, the
// reference form throws std::bad_cast.
template <class T>
const T* datum_cast(const Datum* d) noexcept {
  return d ? d->get_if<T>() : nullptr;
}
template <class T, class V = std::remove_cv_t<std::remove_reference_t<T>>>
const V& datum_cast(const Datum& d) {
  if (const V* p = d.get_if<V>()) return *p;
  throw std::bad_cast();
}

}  // namespace oxbow::streams
