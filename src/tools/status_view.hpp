// `notesctl status`: asks the notesd master's status socket for its page and prints it for a
// person (or as the raw JSON / Prometheus text).
#pragma once
#include <string>

namespace notesd {

/// address: a unix socket path or host:port. format: "text", "json" or "prometheus".
/// Returns the exit status (0, or 1 with a message on stderr).
int print_status(const std::string& address, const std::string& format);

}  // namespace notesd
