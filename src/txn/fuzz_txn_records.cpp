// libFuzzer target: records of `__transaction_state` as a broker reads them back at start-up. A
// damaged log must give a refused record, never a crash, a hang or an allocation the bytes do
// not justify; whatever decodes must encode to bytes that decode again.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>

#include "txn/txn_records.h"

using namespace oxbow::txn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  auto key = input.ConsumeRandomLengthString(256);
  auto value = input.ConsumeRemainingBytesAsString();
  if (auto id = decode_txn_key(key); id && !decode_txn_key(encode_txn_key(*id))) std::abort();
  if (auto metadata = decode_txn_value(value);
      metadata && !decode_txn_value(encode_txn_value(*metadata))) {
    std::abort();
  }
  return 0;
}
