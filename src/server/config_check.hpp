// The whole start-up (and SIGHUP) check of a configuration. base/config.cpp checks what it can
// know alone (ranges, the secret); what only a higher layer can judge is checked here, where the
// layers are composed, by that layer's own parser: the listen address by the supervisor's, the
// connection string by the store's parse_connection_string (the one parser of it).
#pragma once
#include <string>
#include <vector>

#include "base/config.hpp"

namespace notesd {

/// Every problem with c (empty when notesd can start with it): validate(c), then `listen`, `db`
/// and the limits that depend on the database backend.
std::vector<std::string> check_config(const Config& c);

}  // namespace notesd
