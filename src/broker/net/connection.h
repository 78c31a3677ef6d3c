#pragma once
// A client connection of a listener: requests read in order, handled up to 32 at a time (so that
// one client's pipelined produces share an fsync), answered in request order; TLS, the SASL state
// and connections.max.idle.ms.
#include <chrono>

#include "broker/asio.h"

namespace oxbow::broker {

class Broker;
struct Endpoint;
struct TlsListener;

// Takes over `socket` and serves it until either side closes it. `tls`: the listener's TLS setup,
// or nullptr on PLAINTEXT and SASL_PLAINTEXT listeners. `max_idle` <= 0: never idle out.
void start_connection(Broker& broker, asio::ip::tcp::socket socket, const Endpoint& listener,
                      const TlsListener* tls, std::chrono::milliseconds max_idle);

}  // namespace oxbow::broker
