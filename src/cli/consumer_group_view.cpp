#include "cli/consumer_group_view.h"

#include <fmt/format.h>

#include "cli/client_config.h"
#include "cli/wire_client.h"
#include "protocol/errors.h"
#include "protocol/messages/consumer_group_describe.h"

namespace oxbow::cli {

namespace pr = oxbow::protocol;

std::optional<ConsumerGroupView> describe_consumer_group(const ClientOptions& client,
                                                         const std::string& group) {
  WireClient wire(client);
  pr::ConsumerGroupDescribeRequest request;
  request.group_ids = {group};
  auto response = wire.call<pr::ConsumerGroupDescribeResponse>(
      pr::ConsumerGroupDescribeRequest::kApiKey, 0, request);
  if (response.groups.size() != 1) fail(fmt::format("{}: expected 1 group description", group));
  const auto& g = response.groups.front();
  if (g.error_code == pr::code(pr::ErrorCode::kGroupIdNotFound)) return std::nullopt;
  if (g.error_code != 0)
    fail(fmt::format("{}: {}", group, error_text(g.error_code, g.error_message)));
  ConsumerGroupView view{g.group_state, g.assignor_name, g.group_epoch, {}};
  for (const auto& m : g.members) {
    ConsumerGroupMemberView member{m.member_id, m.client_id, m.client_host, {}};
    for (const auto& t : m.assignment.topic_partitions) {
      for (int32_t p : t.partitions) member.partitions.emplace_back(t.topic_name, p);
    }
    view.members.push_back(std::move(member));
  }
  return view;
}

}  // namespace oxbow::cli
