// The crash guard (plugin_guard.h) through the adapters: a plugin that crashes in a call fails
// that call with a ConnectException naming the signal and the function, is never called again,
// and leaves the process, and other plugin objects, running; a crash outside a plugin call still
// kills the process.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "connect/plugin_loader/plugin_guard.h"
#include "connect/plugin_loader/plugin_loader.h"
#include "connect/source_task_context_fake.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/source.h"

namespace oxbow::connect {
namespace {

ConnectorPlugins crashing() {
  ConnectorPlugins plugins;
  EXPECT_EQ(plugin_loader::loadPlugin(plugins, OXBOW_TEST_CRASH_PLUGIN),
            std::vector<std::string>{"test.CrashingSourceConnector"});
  return plugins;
}

std::unique_ptr<SourceTask> startedTask(const ConnectorPlugins& plugins, FakeSourceContext& context,
                                        const Props& props) {
  std::unique_ptr<Connector> connector = plugins.newConnector("test.CrashingSourceConnector");
  connector->start(props);
  std::unique_ptr<Task> task = connector->taskClass().create();
  std::unique_ptr<SourceTask> source(dynamic_cast<SourceTask*>(task.release()));
  source->initialize(context);
  source->start(connector->taskConfigs(1).front());
  return source;
}

// The message of the exception the call threw ("" when it threw none).
template <class F>
std::string thrown(F&& call) {
  try {
    call();
  } catch (const ConnectException& e) {
    return e.what();
  }
  return "";
}

TEST(PluginCrashTest, ASegfaultInPollFailsTheTaskOnlyAndTheTaskIsNeverCalledAgain) {
  ConnectorPlugins plugins = crashing();
  FakeSourceContext context;
  auto task = startedTask(plugins, context, {{"crash", "segv"}, {"crash.at", "2"}});
  EXPECT_EQ(task->poll().size(), 1u);
  EXPECT_EQ(task->poll().size(), 1u);
  std::string message = thrown([&] { task->poll(); });
  EXPECT_EQ(message, "Plugin crashing (" OXBOW_TEST_CRASH_PLUGIN
                     ") crashed with signal SIGSEGV in source_task_poll; its task is stopped and "
                     "the plugin's objects are abandoned. The worker keeps running but the plugin "
                     "may have left shared state corrupted: restart the worker when convenient");
  // Any further call answers the same without entering the plugin; what only tells the plugin
  // something as the task winds down (commit, stop) and freeing it are skipped.
  EXPECT_EQ(thrown([&] { task->poll(); }), message);
  EXPECT_EQ(thrown([&] { task->commit(); }), "");
  EXPECT_EQ(thrown([&] { task->stop(); }), "");
  task.reset();
  // Another task of the same plugin runs.
  auto healthy = startedTask(plugins, context, {{"crash.at", "5"}});
  EXPECT_EQ(healthy->poll().size(), 1u);
}

TEST(PluginCrashTest, EachSignalIsCaughtAndNamed) {
  ConnectorPlugins plugins = crashing();
  FakeSourceContext context;
  const std::vector<std::pair<std::string, std::string>> crashes = {{"segv", "SIGSEGV"},
                                                                    {"abort", "SIGABRT"},
                                                                    {"fpe", "SIGFPE"},
                                                                    {"ill", "SIGILL"},
                                                                    {"overflow", "SIGSEGV"}};
  for (const auto& [how, signal] : crashes) {
    auto task = startedTask(plugins, context, {{"crash", how}});
    EXPECT_NE(thrown([&] { task->poll(); }).find("crashed with signal " + signal + " in "),
              std::string::npos)
        << how;
  }
}

TEST(PluginCrashTest, ACrashOnAnotherThreadIsCaughtThere) {
  ConnectorPlugins plugins = crashing();
  std::string message;
  std::thread thread([&] {
    FakeSourceContext context;
    auto task = startedTask(plugins, context, {{"crash", "overflow"}});
    message = thrown([&] { task->poll(); });
  });
  thread.join();
  EXPECT_NE(message.find("crashed with signal SIGSEGV in source_task_poll"), std::string::npos);
}

TEST(PluginCrashTest, AConnectorThatCrashesAsItStartsFails) {
  ConnectorPlugins plugins = crashing();
  std::unique_ptr<Connector> connector = plugins.newConnector("test.CrashingSourceConnector");
  EXPECT_NE(thrown([&] {
              connector->start({{"crash.in", "connector.start"}});
            }).find("crashed with signal SIGSEGV in connector_start; its connector is stopped"),
            std::string::npos);
  connector->stop();
}

TEST(PluginCrashDeathTest, ACrashOutsideAPluginCallStillKillsTheProcess) {
  static volatile int* volatile nowhere = nullptr;
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto nothing = [] {};
        plugin_loader::runGuarded(nothing);  // the handlers installed
        *nowhere = 1;
      },
      testing::KilledBySignal(SIGSEGV), "");
  EXPECT_EXIT(
      {
        auto nothing = [] {};
        plugin_loader::runGuarded(nothing);
        abort();
      },
      testing::KilledBySignal(SIGABRT), "");
  // The worker's code a plugin called back into is the worker's, even inside a guarded call.
  EXPECT_EXIT(
      {
        auto callback = [] {
          plugin_loader::HostCodeScope host;
          *nowhere = 1;
        };
        plugin_loader::runGuarded(callback);
      },
      testing::KilledBySignal(SIGSEGV), "");
}

TEST(PluginCrashTest, TheGuardAnswersTheSignalAndNestsInsideAHostCallback) {
  static volatile int* volatile nowhere = nullptr;
  int inner = -1;
  auto plugin = [&] {
    plugin_loader::HostCodeScope host;
    auto nested = [] { *nowhere = 1; };
    inner = plugin_loader::runGuarded(nested);
  };
  EXPECT_EQ(plugin_loader::runGuarded(plugin), 0);
  EXPECT_EQ(inner, SIGSEGV);
  auto crashing = [] { *nowhere = 1; };
  EXPECT_EQ(plugin_loader::runGuarded(crashing), SIGSEGV);
}

}  // namespace
}  // namespace oxbow::connect
