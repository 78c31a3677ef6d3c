#include "connect/runtime/worker_metrics.h"

#include "common/metrics.h"
#include "connect/runtime/task_runner.h"

namespace oxbow::connect::runtime {

namespace {

struct ErrorMetric {
  const char* name;
  const char* help;
  int64_t TaskMetrics::*field;
};

constexpr ErrorMetric kErrorMetrics[] = {
    {"kafka_connect_task_error_metrics_total_record_failures",
     "Record processing failures of the task, each attempt counted", &TaskMetrics::recordFailures},
    {"kafka_connect_task_error_metrics_total_record_errors",
     "Records of the task that failed after every retry", &TaskMetrics::recordErrors},
    {"kafka_connect_task_error_metrics_total_records_skipped",
     "Records the task skipped because of errors (errors.tolerance=all)",
     &TaskMetrics::recordsSkipped},
    {"kafka_connect_task_error_metrics_total_retries", "Retried operations of the task",
     &TaskMetrics::retries},
};

}  // namespace

TaskMetrics metricsOf(const TaskRunner& task) {
  ErrorCounts counts = task.errorCounts();
  return TaskMetrics{task.connectorName(),  task.taskId(),       taskStateName(task.state()),
                     counts.recordFailures, counts.recordErrors, counts.recordsSkipped,
                     counts.retries};
}

std::string prometheusMetrics(const Herder& herder) {
  metrics::PrometheusWriter out;
  auto [connectors, tasks] = herder.runningCounts();
  out.family("kafka_connect_connect_worker_metrics_connector_count", "gauge",
             "Connectors that run on this worker");
  out.sample("kafka_connect_connect_worker_metrics_connector_count", {},
             static_cast<double>(connectors));
  out.family("kafka_connect_connect_worker_metrics_task_count", "gauge",
             "Tasks that run on this worker");
  out.sample("kafka_connect_connect_worker_metrics_task_count", {}, static_cast<double>(tasks));
  std::vector<TaskMetrics> all = herder.taskMetrics();
  for (const ErrorMetric& metric : kErrorMetrics) {
    out.family(metric.name, "counter", metric.help);
    for (const TaskMetrics& task : all) {
      out.sample(metric.name, {{"connector", task.connector}, {"task", std::to_string(task.task)}},
                 static_cast<double>(task.*metric.field));
    }
  }
  return out.text();
}

}  // namespace oxbow::connect::runtime
