#pragma once
// Calls into a plugin's C table run under a guard that turns a crash inside the call (SIGSEGV,
// SIGBUS, SIGFPE, SIGILL, SIGABRT in the calling thread) into a return to the guard, so that the
// worker can fail the one task or connector instead of dying. A crash outside a guarded call is
// passed on to the handler that was there before, or to the default action, as if no guard existed.
#include <utility>

namespace oxbow::connect::plugin_loader {

// Runs body(arg) on this thread under the guard: 0 when it returned, else the signal it crashed
// with. Whatever the plugin's frames held when it crashed is abandoned, never unwound.
int runGuarded(void (*body)(void*), void* arg);

template <class F>
int runGuarded(F& body) {
  return runGuarded([](void* f) { (*static_cast<F*>(f))(); }, &body);
}

// Held while the worker's code runs for a plugin (its callbacks into the host, plugin_host.h):
// a crash there is the worker's own, never caught as the plugin's.
class HostCodeScope {
 public:
  HostCodeScope();
  ~HostCodeScope();
  HostCodeScope(const HostCodeScope&) = delete;
  HostCodeScope& operator=(const HostCodeScope&) = delete;

 private:
  void* saved_;
};

// "SIGSEGV" for SIGSEGV and so on, for the signals the guard catches.
const char* signalName(int signal);

}  // namespace oxbow::connect::plugin_loader
