#include "common/process_signals.h"

#include <csignal>

namespace oxbow {

void ignore_peer_signals() {
  struct sigaction action {};
  action.sa_handler = SIG_IGN;
  sigemptyset(&action.sa_mask);
  sigaction(SIGPIPE, &action, nullptr);
}

}  // namespace oxbow
