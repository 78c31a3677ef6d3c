#include "oxbow/streams/datum.h"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>

namespace oxbow::streams {
namespace {

struct Big {
  std::array<int64_t, 8> numbers{};
  std::string text;
};

TEST(Datum, NullByDefaultAndAfterReset) {
  Datum d;
  EXPECT_FALSE(d.has_value());
  EXPECT_EQ(d.type(), typeid(void));
  d = std::string("x");
  EXPECT_TRUE(d.has_value());
  d.reset();
  EXPECT_FALSE(d.has_value());
  EXPECT_EQ(datum_cast<std::string>(&d), nullptr);
}

TEST(Datum, HoldsSmallAndLargeValuesAndReadsThemBackByType) {
  Datum small = int64_t{42};
  Datum text = std::string(100, 'x');  // the string's own buffer, the Datum's inline slot
  Datum big = Big{{1, 2, 3}, "big"};   // too large for the slot: boxed
  EXPECT_EQ(datum_cast<int64_t>(small), 42);
  EXPECT_EQ(datum_cast<std::string>(text), std::string(100, 'x'));
  EXPECT_EQ(datum_cast<Big>(big).text, "big");
  EXPECT_EQ(datum_cast<Big>(big).numbers[2], 3);
  EXPECT_EQ(datum_cast<int32_t>(&small), nullptr);  // another type: no value, no conversion
  EXPECT_THROW(datum_cast<std::string>(small), std::bad_cast);
  EXPECT_EQ(small.type(), typeid(int64_t));
}

TEST(Datum, CopiesAreIndependentAndMovesLeaveTheSourceNull) {
  Datum a = std::string(40, 'a');
  Datum b = a;
  a = std::string("changed");
  EXPECT_EQ(datum_cast<std::string>(b), std::string(40, 'a'));
  Datum boxed = Big{{7}, "box"};
  Datum moved = std::move(boxed);
  EXPECT_FALSE(boxed.has_value());  // NOLINT(bugprone-use-after-move): the move's contract
  EXPECT_EQ(datum_cast<Big>(moved).numbers[0], 7);
  Datum inline_moved = std::move(b);
  EXPECT_FALSE(b.has_value());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(datum_cast<std::string>(inline_moved), std::string(40, 'a'));
}

TEST(Datum, DestroysWhatItOwnsOnce) {
  auto counter = std::make_shared<int>(0);
  {
    Datum d = counter;  // a shared_ptr fits inline
    Datum copy = d;
    EXPECT_EQ(counter.use_count(), 3);
    Datum moved = std::move(copy);
    EXPECT_EQ(counter.use_count(), 3);
  }
  EXPECT_EQ(counter.use_count(), 1);
}

TEST(Datum, ABorrowedValueIsReadInPlaceAndCopiedOnlyWhenCopied) {
  std::string buffer(50, 'b');
  Datum lent = Datum::borrow(buffer);
  EXPECT_TRUE(lent.borrowed());
  EXPECT_EQ(&datum_cast<std::string>(lent), &buffer);  // no copy
  Datum passed = std::move(lent);                      // moving keeps the loan
  EXPECT_EQ(&datum_cast<std::string>(passed), &buffer);
  Datum kept = passed;  // what a node keeps is its own
  EXPECT_FALSE(kept.borrowed());
  buffer.assign("overwritten by the next record");
  EXPECT_EQ(datum_cast<std::string>(kept), std::string(50, 'b'));
  EXPECT_EQ(datum_cast<std::string>(passed), buffer);
}

TEST(Datum, LendRefersToWhatTheOwnerHolds) {
  Datum owner = std::string(30, 'o');
  Datum lent = Datum::lend(owner);
  EXPECT_TRUE(lent.borrowed());
  EXPECT_EQ(&datum_cast<std::string>(lent), &datum_cast<std::string>(owner));
  Datum again = Datum::lend(lent);  // a loan of a loan refers to the same value
  EXPECT_EQ(&datum_cast<std::string>(again), &datum_cast<std::string>(owner));
  EXPECT_FALSE(Datum::lend(Datum()).has_value());
  Datum boxed = Big{{5}, "x"};
  EXPECT_EQ(&datum_cast<Big>(Datum::lend(boxed)), &datum_cast<Big>(boxed));
}

TEST(Datum, AssigningTheSameTypeAssignsTheHeldValue) {
  Datum d = std::string(200, 'x');
  const char* storage = datum_cast<std::string>(d).data();
  const std::string shorter(100, 'y');
  d = shorter;  // copy-assigned into the held string: its buffer is kept
  EXPECT_EQ(datum_cast<std::string>(d).data(), storage);
  EXPECT_EQ(datum_cast<std::string>(d), shorter);
  std::string buffer = "lent";
  Datum lent = Datum::borrow(buffer);
  EXPECT_EQ(lent.owned_if<std::string>(), nullptr);  // a loan is read-only
  lent = std::string("own");                         // assigning replaces the loan
  EXPECT_FALSE(lent.borrowed());
  EXPECT_EQ(buffer, "lent");
}

}  // namespace
}  // namespace oxbow::streams
