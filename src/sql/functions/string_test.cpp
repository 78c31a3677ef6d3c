#include <algorithm>

#include "sql/functions/function_test_util.h"

namespace oxbow::sql {
namespace {

using StringFunctions = FunctionTest;

TEST_F(StringFunctions, CaseTrimLengthConcat) {
  EXPECT_EQ(eval("UCASE(s)"), "'HELLO WORLD'");
  EXPECT_EQ(eval("LCASE(s)"), "'hello world'");
  EXPECT_EQ(eval("TRIM('  x y \t')"), "'x y'");
  EXPECT_EQ(eval("LEN(s)"), "11");
  EXPECT_EQ(eval("LEN(bs)"), "4");
  EXPECT_EQ(eval("LEN('好')"), "1");
  EXPECT_EQ(eval("UCASE(ns)"), "null");
  EXPECT_EQ(eval("CONCAT('a', ns, 'b')"), "'ab'");  // NULL counts as empty
  EXPECT_EQ(eval("CONCAT_WS('-', 'a', ns, 'b')"), "'a-b'");
  EXPECT_EQ(eval("CONCAT_WS(ns, 'a', 'b')"), "null");
  EXPECT_EQ(eval("CONCAT_WS('-')"),
            "ERROR: Function Concat_WS expects at least two input arguments.");
  EXPECT_EQ(eval("LEN(1)"), "REFUSED: Function 'LEN' does not accept parameters (INTEGER).");
}

// substring.json: "do substring with strings with just pos" and "... with pos and length".
TEST_F(StringFunctions, Substring) {
  EXPECT_EQ(eval("SUBSTRING('some_string', 6)"), "'string'");
  EXPECT_EQ(eval("SUBSTRING('another', 6)"), "'er'");
  EXPECT_EQ(eval("SUBSTRING('short', 6)"), "''");
  EXPECT_EQ(eval("SUBSTRING('some_string', 6, 3)"), "'str'");
  EXPECT_EQ(eval("SUBSTRING('some_string', -6, 3)"), "'str'");
  EXPECT_EQ(eval("SUBSTRING('some_string', 0, 4)"), "'some'");
  EXPECT_EQ(eval("SUBSTRING(s, ni)"), "null");
  EXPECT_EQ(eval("FROM_BYTES(SUBSTRING(bs, 2, 2), 'hex')"), "'0203'");
  EXPECT_EQ(eval("SUBSTRING('héllo', 2, 3)"), "'éll'");
}

// chr.json: "codepoint from decimal code" and "codepoint from text code".
TEST_F(StringFunctions, ChrEltFieldInitcap) {
  EXPECT_EQ(eval("CHR(75)"), "'K'");
  EXPECT_EQ(eval("CHR(22909)"), "'好'");
  EXPECT_EQ(eval("CHR(-1)"), "null");
  EXPECT_EQ(eval("CHR('\\u004b')"), "'K'");
  EXPECT_EQ(eval("CHR('\\ud820\\udeb8')"), "'𘊸'");
  EXPECT_EQ(eval("CHR('75')"), "null");
  EXPECT_EQ(eval("ELT(2, 'a', 'b')"), "'b'");
  EXPECT_EQ(eval("ELT(3, 'a', 'b')"), "null");
  EXPECT_EQ(eval("FIELD('b', 'a', 'b')"), "2");
  EXPECT_EQ(eval("FIELD(ns, 'a')"), "0");
  // initcap.json "do initcap".
  EXPECT_EQ(eval("INITCAP('the   Quick br0wn fOx')"), "'The   Quick Br0wn Fox'");
  EXPECT_EQ(eval("INITCAP('some_string')"), "'Some_string'");
}

// instr.json: the three "test instr ..." cases.
TEST_F(StringFunctions, Instr) {
  EXPECT_EQ(eval("INSTR('corporate floor', 'or')"), "2");
  EXPECT_EQ(eval("INSTR('should I stay or should I go', 'or')"), "15");
  EXPECT_EQ(eval("INSTR('no substring', 'or')"), "0");
  EXPECT_EQ(eval("INSTR('corporate floor', 'or', 4)"), "5");
  EXPECT_EQ(eval("INSTR('corporate floor', 'or', 4, 2)"), "14");
  EXPECT_EQ(eval("INSTR('corporate floor', 'or', -3)"), "5");
  EXPECT_EQ(eval("INSTR(ns, 'or')"), "0");
}

TEST_F(StringFunctions, PadMaskReplaceMd5) {
  EXPECT_EQ(eval("LPAD('abc', 6, 'xy')"), "'xyxabc'");
  EXPECT_EQ(eval("RPAD('abc', 6, 'xy')"), "'abcxyx'");
  EXPECT_EQ(eval("LPAD('abcdef', 3, 'x')"), "'abc'");
  EXPECT_EQ(eval("LPAD('abc', -1, 'x')"), "null");
  EXPECT_EQ(eval("RPAD('abc', 5, '')"), "null");
  EXPECT_EQ(eval("MASK('Ab1-')"), "'Xxn-'");
  EXPECT_EQ(eval("MASK('Ab1-', '*', ns, '#', ns)"), "'*b#-'");
  EXPECT_EQ(eval("MASK_KEEP_LEFT('Abc123', 2)"), "'Abxnnn'");
  EXPECT_EQ(eval("MASK_KEEP_RIGHT('Abc123', 2)"), "'Xxxn23'");
  EXPECT_EQ(eval("MASK_LEFT('Abc123', 2)"), "'Xxc123'");
  EXPECT_EQ(eval("MASK_RIGHT('Abc123', 2)"), "'Abc1nn'");
  EXPECT_EQ(
      eval("MASK_LEFT('Abc', -1)"),
      "ERROR: function mask_left requires a non-negative number of characters to mask or skip");
  EXPECT_EQ(eval("MASK('a', 'XX', 'x', 'n', '-')"),
            "ERROR: Invalid mask character. Must be only single character, but was 'XX'");
  EXPECT_EQ(eval("COALESCE(MASK('a', '', 'x', 'n', '-'), 'kept')"),  // Masker throws: the whole
                                                                     // expression fails
            "ERROR: Invalid mask character. Must be only single character, but was ''");
  EXPECT_EQ(eval("REPLACE(s, 'o', '0')"), "'Hell0 W0rld'");
  EXPECT_EQ(eval("REPLACE('ab', '', '-')"), "'-a-b-'");
  // md5.json "md5 to hex string".
  EXPECT_EQ(eval("MD5('r1')"), "'7c92cf1eee8d99cc85f8355a3d6e4b86'");
}

TEST_F(StringFunctions, SplitAndUuid) {
  EXPECT_EQ(eval("SPLIT('a,b,,c,', ',')"), "['a', 'b', '', 'c', '']");
  EXPECT_EQ(eval("SPLIT('abc', '')"), "['a', 'b', 'c']");
  EXPECT_EQ(eval("SPLIT('abc', 'x')"), "['abc']");
  EXPECT_EQ(eval("SPLIT_TO_MAP('a=1;b=2;a=3', ';', '=')"), "{'a'='3', 'b'='2'}");
  EXPECT_EQ(eval("SPLIT_TO_MAP('a=1', '=', '=')"), "null");
  EXPECT_EQ(eval("LEN(UUID())"), "36");
  EXPECT_EQ(eval("UUID(TO_BYTES('00112233445566778899AABBCCDDEEFF', 'hex'))"),
            "'00112233-4455-6677-8899-aabbccddeeff'");
  EXPECT_EQ(eval("UUID(bs)"), "null");
}

TEST_F(StringFunctions, RegularExpressions) {
  EXPECT_EQ(eval("REGEXP_EXTRACT('(\\w+) (\\w+)', s, 2)"), "'World'");
  EXPECT_EQ(eval("REGEXP_EXTRACT('x+', s)"), "null");
  EXPECT_EQ(eval("REGEXP_EXTRACT('(o)', s, 3)"), "null");
  EXPECT_EQ(eval("REGEXP_EXTRACT_ALL('o.', s)"), "['o ', 'or']");
  EXPECT_EQ(eval("REGEXP_REPLACE(s, '(l+)', '[$1]')"), "'He[ll]o Wor[l]d'");
  EXPECT_EQ(eval("REGEXP_SPLIT_TO_ARRAY('a1b22c', '[0-9]+')"), "['a', 'b', 'c']");
  EXPECT_EQ(eval("REGEXP_REPLACE(s, '(', 'x')"), "ERROR: Invalid regular expression pattern: (");
  // Java's Matcher.group(-1) throws, but only when there is a match to take it from.
  EXPECT_EQ(eval("REGEXP_EXTRACT('l+', s, -1)"), "ERROR: No group -1");
  EXPECT_EQ(eval("REGEXP_EXTRACT_ALL('l+', s, -1)"), "ERROR: No group -1");
  EXPECT_EQ(eval("REGEXP_EXTRACT('z', s, -1)"), "null");
  EXPECT_EQ(eval("REGEXP_EXTRACT_ALL('z', s, -1)"), "[]");
  EXPECT_EQ(eval("REGEXP_EXTRACT('(l)', s, 2)"), "null");  // a group the pattern lacks: NULL
  EXPECT_EQ(eval("REGEXP_REPLACE(s, ns, 'x')"), "null");
}

TEST_F(StringFunctions, EncodingsAndBytes) {
  EXPECT_EQ(eval("TO_BYTES('AQID', 'base64') = TO_BYTES('010203', 'hex')"), "true");
  EXPECT_EQ(eval("FROM_BYTES(bs, 'base64')"), "'AQIDBA=='");
  EXPECT_EQ(eval("FROM_BYTES(bs, 'hex')"), "'01020304'");
  EXPECT_EQ(eval("FROM_BYTES(TO_BYTES('hi', 'utf8'), 'base64')"), "'aGk='");
  EXPECT_EQ(eval("TO_BYTES('x', 'rot13')"),
            "ERROR: Unknown encoding type 'rot13'. Supported formats are 'hex', 'utf8', "
            "'ascii', and 'base64'.");
  EXPECT_EQ(eval("ENCODE('Hello', 'utf8', 'hex')"), "'48656c6c6f'");
  EXPECT_EQ(eval("ENCODE('0x48656c6c6f', 'hex', 'utf8')"), "'Hello'");
  EXPECT_EQ(eval("ENCODE('SGVsbG8=', 'base64', 'utf8')"), "'Hello'");
  EXPECT_EQ(eval("ENCODE('x', 'utf8', 'utf16')"),
            "ERROR: Supported input and output encodings are: hex, utf8, ascii and base64");
  EXPECT_EQ(eval("INT_FROM_BYTES(bs)"), "16909060");
  EXPECT_EQ(eval("INT_FROM_BYTES(bs, 'LITTLE_ENDIAN')"), "67305985");
  EXPECT_EQ(eval("BIGINT_FROM_BYTES(bs)"),
            "ERROR: Number of bytes must be equal to 8, but found 4");
  EXPECT_EQ(eval("DOUBLE_FROM_BYTES(TO_BYTES('3FF8000000000000', 'hex'))"), "1.5");
  EXPECT_EQ(eval("INT_FROM_BYTES(bs, 'MIDDLE')"),
            "ERROR: Byte order must be BIG_ENDIAN or LITTLE_ENDIAN. Unknown byte order 'MIDDLE'.");
}

}  // namespace
}  // namespace oxbow::sql

namespace oxbow::sql {
namespace {

// What SHOW FUNCTIONS and DESCRIBE FUNCTION read.
TEST(FunctionDescriptions, ListAndDescribe) {
  FunctionRegistry registry;
  auto all = registry.list();
  ASSERT_GT(all.size(), 100u);
  EXPECT_TRUE(
      std::is_sorted(all.begin(), all.end(), [](auto* a, auto* b) { return a->name < b->name; }));
  const FunctionInfo& substring = registry.describe("substring");
  EXPECT_STREQ(substring.type_name(), "SCALAR");
  EXPECT_EQ(substring.category, "STRING");
  EXPECT_EQ(substring.signature_text(substring.variants[0]), "SUBSTRING(str VARCHAR, pos INT)");
  EXPECT_EQ(substring.variants[0].returns, "VARCHAR");
  const FunctionInfo& concat = registry.describe("CONCAT");
  EXPECT_EQ(concat.signature_text(concat.variants[0]), "CONCAT(inputs VARCHAR[])");
  const FunctionInfo& slice = registry.describe("SLICE");
  EXPECT_EQ(slice.signature_text(slice.variants[0]), "SLICE(in ARRAY<T>, from INT, to INT)");
  EXPECT_EQ(slice.variants[0].returns, "ARRAY<T>");
  EXPECT_STREQ(registry.describe("topk").type_name(), "AGGREGATE");
  EXPECT_STREQ(registry.describe("EXPLODE").type_name(), "TABLE");
  EXPECT_THROW(registry.describe("WONT_FIND_ME"), SqlError);
  for (const FunctionInfo* f : all) {
    EXPECT_FALSE(f->description.empty()) << f->name;
    EXPECT_FALSE(f->category.empty()) << f->name;
    for (const auto& v : f->variants)
      EXPECT_TRUE(f->kind != FunctionKind::kScalar || v.implementation ||
                  v.lambda != LambdaCall::kNone)
          << f->name;
  }
}

}  // namespace
}  // namespace oxbow::sql
