// `oxbow txn list|describe`: the broker's transactions, through ListTransactions and
// DescribeTransactions (librdkafka has no API for either, so they go over a WireClient).
#include <CLI/CLI.hpp>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include <fmt/ranges.h>

#include "cli/client_config.h"
#include "cli/commands.h"
#include "cli/wire_client.h"
#include "protocol/errors.h"
#include "protocol/messages/describe_transactions.h"
#include "protocol/messages/list_transactions.h"

namespace oxbow::cli {
namespace {

namespace pr = oxbow::protocol;

constexpr int16_t kDescribeTransactions = 65;
constexpr int16_t kListTransactions = 66;

struct TxnOptions {
  ClientOptions client;
  std::vector<std::string> states;
  std::vector<int64_t> producer_ids;
  std::vector<std::string> transactional_ids;
};

void list_transactions(const TxnOptions& options) {
  WireClient client(options.client);
  pr::ListTransactionsRequest request;
  request.state_filters = options.states;
  request.producer_id_filters = options.producer_ids;
  auto response = client.call<pr::ListTransactionsResponse>(kListTransactions, 0, request);
  if (response.error_code != 0) {
    fail(fmt::format("list transactions: {}", error_text(response.error_code)));
  }
  if (!response.unknown_state_filters.empty()) {
    fail(fmt::format(
        "unknown --state {} (known: Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, "
        "CompleteAbort, Dead, PrepareEpochFence)",
        fmt::join(response.unknown_state_filters, ",")));
  }
  std::vector<std::vector<std::string>> rows{{"TRANSACTIONAL-ID", "PRODUCER-ID", "STATE"}};
  for (const auto& t : response.transaction_states) {
    rows.push_back({t.transactional_id, std::to_string(t.producer_id), t.transaction_state});
  }
  print_table(rows);
}

std::string format_time(int64_t ms) {
  if (ms < 0) return "-";
  std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &local);
  return text;
}

void describe_transactions(const TxnOptions& options) {
  WireClient client(options.client);
  pr::DescribeTransactionsRequest request;
  request.transactional_ids = options.transactional_ids;
  auto response = client.call<pr::DescribeTransactionsResponse>(kDescribeTransactions, 0, request);
  std::vector<std::vector<std::string>> rows{
      {"TRANSACTIONAL-ID", "PRODUCER-ID", "EPOCH", "STATE", "TIMEOUT-MS", "STARTED", "PARTITIONS"}};
  bool failed = false;
  for (const auto& t : response.transaction_states) {
    if (t.error_code != 0) {
      fmt::print(stderr, "oxbow: error: {}: {}\n", t.transactional_id, error_text(t.error_code));
      failed = true;
      continue;
    }
    std::vector<std::string> partitions;
    for (const auto& topic : t.topics) {
      for (int32_t p : topic.partitions) partitions.push_back(fmt::format("{}-{}", topic.topic, p));
    }
    rows.push_back({t.transactional_id, std::to_string(t.producer_id),
                    std::to_string(t.producer_epoch), t.transaction_state,
                    std::to_string(t.transaction_timeout_ms),
                    format_time(t.transaction_start_time_ms),
                    partitions.empty() ? "-" : fmt::format("{}", fmt::join(partitions, ","))});
  }
  if (rows.size() > 1) print_table(rows);
  if (failed) throw CLI::RuntimeError(1);
}

}  // namespace

void add_txn_command(CLI::App& app) {
  auto options = std::make_shared<TxnOptions>();
  CLI::App* txn = app.add_subcommand("txn", "List and describe transactions");
  txn->require_subcommand(1);

  CLI::App* list =
      txn->add_subcommand("list", "List transactional ids, their producer ids and states");
  add_client_options(*list, options->client);
  list->add_option(
          "--state", options->states,
          "Only these states (Ongoing, CompleteCommit, CompleteAbort, Empty, ...; repeatable or "
          "comma-separated)")
      ->delimiter(',');
  list->add_option("--producer-id", options->producer_ids, "Only these producer ids")
      ->delimiter(',');
  list->callback([options] { list_transactions(*options); });

  CLI::App* describe =
      txn->add_subcommand("describe", "Show transactions: state, producer, timeout, partitions");
  add_client_options(*describe, options->client);
  describe->add_option("transactional-ids", options->transactional_ids, "Transactional ids")
      ->required();
  describe->callback([options] { describe_transactions(*options); });
}

}  // namespace oxbow::cli
