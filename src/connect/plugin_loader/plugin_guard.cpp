// The crash guard: process-wide handlers, installed once, that jump back to the innermost guarded
// call of the faulting thread, each such thread having an alternate signal stack so that a plugin
// overflowing its stack is caught too.
#include "connect/plugin_loader/plugin_guard.h"

#include <setjmp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <mutex>

namespace oxbow::connect::plugin_loader {

namespace {

constexpr std::array<int, 5> kSignals = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

struct Frame {
  sigjmp_buf jump;
  volatile sig_atomic_t signal = 0;
  Frame* previous = nullptr;
};

// Plain data, so that the handler reads it without running any initialization.
// Initial-exec, as this library is linked, not dlopen()ed: the handler's read of it then needs no
// allocation.
__attribute__((tls_model("initial-exec"))) thread_local Frame* tInnermost = nullptr;

struct sigaction gPrevious[NSIG];

// Only a fault of this thread's own, or a signal this process sent itself (abort()), belongs to
// the plugin call; a signal another process sent is not the plugin's doing.
bool raisedByThisThread(const siginfo_t* info) {
  return info->si_code > 0 || info->si_pid == getpid();
}

void passOn(int signal, siginfo_t* info, void* context) {
  const struct sigaction& previous = gPrevious[signal];
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(signal, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal);
    return;
  }
  // Blocked while this handler runs, the re-raised signal is delivered, with the default action,
  // as the handler returns; a fault would also recur on the faulting instruction.
  sigaction(signal, &previous, nullptr);
  raise(signal);
}

extern "C" void onCrash(int signal, siginfo_t* info, void* context) {
  Frame* frame = tInnermost;
  if (frame == nullptr || !raisedByThisThread(info)) {
    passOn(signal, info, context);
    return;
  }
  frame->signal = signal;
  siglongjmp(frame->jump, 1);
}

void installHandlers() {
  struct sigaction action {};
  action.sa_sigaction = onCrash;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int signal : kSignals) sigaction(signal, &action, &gPrevious[signal]);
}

// This thread's alternate signal stack, unless it had one already; removed as the thread ends.
class AltStack {
 public:
  AltStack() {
    stack_t current{};
    if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) == 0) return;
    long minimum = sysconf(_SC_SIGSTKSZ);
    size_t size = std::max<size_t>(minimum > 0 ? static_cast<size_t>(minimum) : 0, 64 * 1024);
    memory_ = std::malloc(size);
    if (memory_ == nullptr) return;
    stack_t stack{};
    stack.ss_sp = memory_;
    stack.ss_size = size;
    if (sigaltstack(&stack, nullptr) != 0) {
      std::free(memory_);
      memory_ = nullptr;
    }
  }
  ~AltStack() {
    if (memory_ == nullptr) return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
    std::free(memory_);
  }
  AltStack(const AltStack&) = delete;
  AltStack& operator=(const AltStack&) = delete;

 private:
  void* memory_ = nullptr;
};

void prepareThread() {
  static std::once_flag installed;
  std::call_once(installed, installHandlers);
  thread_local AltStack stack;
}

}  // namespace

int runGuarded(void (*body)(void*), void* arg) {
  prepareThread();
  Frame frame;
  frame.previous = tInnermost;
  if (sigsetjmp(frame.jump, 1) != 0) {
    tInnermost = frame.previous;
    return frame.signal;
  }
  tInnermost = &frame;
  try {
    body(arg);
  } catch (...) {
    tInnermost = frame.previous;
    throw;
  }
  tInnermost = frame.previous;
  return 0;
}

HostCodeScope::HostCodeScope() : saved_(tInnermost) {
  tInnermost = nullptr;
}

HostCodeScope::~HostCodeScope() {
  tInnermost = static_cast<Frame*>(saved_);
}

const char* signalName(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    default:
      return "an unknown signal";
  }
}

}  // namespace oxbow::connect::plugin_loader
