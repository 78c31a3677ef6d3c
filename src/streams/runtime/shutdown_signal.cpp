#include "streams/runtime/shutdown_signal.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

namespace oxbow::streams::detail {

namespace {

int64_t end_offset(rd_kafka_t* client, const std::string& topic) {
  int64_t high = 0;
  auto err = query_watermarks(client, topic, 0, nullptr, &high, 5000);
  if (err) throw std::runtime_error("end offset of " + topic + ": " + rd_kafka_err2str(err));
  return high;
}

}  // namespace

ShutdownSignal::ShutdownSignal(const Config& app, const std::string& application_id,
                               int32_t replication_factor)
    : topic_(application_id + "-shutdown-requests") {
  client_ = make_client(RD_KAFKA_PRODUCER,
                        client_conf(app, ClientRole::kAdmin,
                                    {{"client.id", application_id + "-shutdown-signal"},
                                     {"acks", "all"},
                                     {"linger.ms", "0"},
                                     {"allow.auto.create.topics", "false"}}));
  create_topics(client_.get(), {{topic_,
                                 1,
                                 replication_factor,
                                 {{"cleanup.policy", "delete"}, {"retention.ms", "86400000"}}}});
  end_at_start_ = end_offset(client_.get(), topic_);
}

bool ShutdownSignal::request(const std::string& process_id, const std::string& reason) {
  auto err =
      rd_kafka_producev(client_.get(), RD_KAFKA_V_TOPIC(topic_.c_str()), RD_KAFKA_V_PARTITION(0),
                        RD_KAFKA_V_KEY(process_id.data(), process_id.size()),
                        RD_KAFKA_V_VALUE(const_cast<char*>(reason.data()), reason.size()),
                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
  if (!err) err = rd_kafka_flush(client_.get(), 10000);
  if (err)
    spdlog::error("could not ask the application's other instances to shut down ({}): {}", topic_,
                  rd_kafka_err2str(err));
  return !err;
}

bool ShutdownSignal::requested() {
  try {
    return end_offset(client_.get(), topic_) > end_at_start_;
  } catch (const std::exception& e) {
    spdlog::debug("{}", e.what());  // the broker away for a while: asked again later
    return false;
  }
}

}  // namespace oxbow::streams::detail
