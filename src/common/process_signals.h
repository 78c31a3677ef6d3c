#pragma once

namespace oxbow {

// What a peer does must never end the process. A client that hangs up while a response is on its
// way makes sendfile(2) raise SIGPIPE (socket writes pass MSG_NOSIGNAL, sendfile cannot), and the
// reader of a tool's stdout going away does the same to its writes. With SIGPIPE ignored for the
// whole process each such write fails with EPIPE instead, which its writer handles as a closed
// connection. Called first thing in main(), before any thread starts, so that every subcommand
// (and every thread, librdkafka's included) inherits it.
void ignore_peer_signals();

}  // namespace oxbow
