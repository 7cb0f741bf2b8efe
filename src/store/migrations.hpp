// Numbered schema migrations, embedded from sql/<backend>/NNN_name.sql at build time.
#pragma once
#include <string>
#include <vector>

namespace notesd {

struct EmbeddedMigration {
    const char* backend;   // "sqlite", "mysql", "postgresql"
    int version;           // NNN
    const char* name;      // "001_init"
    const char* sql;       // statements separated by ";\n"
};

const std::vector<EmbeddedMigration>& embedded_migrations();
/// The migrations of one backend in ascending version order.
std::vector<EmbeddedMigration> migrations_for(const std::string& backend);
/// Splits a migration script into statements (on ';' at the end of a line, outside quotes).
std::vector<std::string> split_sql(const std::string& script);

}  // namespace notesd
