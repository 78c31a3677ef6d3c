#pragma once
// A worker's metrics in Prometheus' text format, served at GET /metrics beside Connect's REST API:
// Kafka Connect's task-error-metrics per task and the worker's connector and task counts, named
// as Prometheus' JMX exporter names Kafka's MBeans (kafka_connect_task_error_metrics_..., with the
// connector and task as labels).
#include <string>

#include "connect/runtime/herder.h"

namespace oxbow::connect::runtime {

std::string prometheusMetrics(const Herder& herder);

}  // namespace oxbow::connect::runtime
