// The `fault` suite: how each backend's native errors are sorted into environmental faults
// (Dialect::fault_of), from errors made the way SOCI's backends make them, and what the store
// does with each kind (store/fault.hpp).
#include <boost/test/unit_test.hpp>

#include <soci/mysql/soci-mysql.h>
#include <soci/postgresql/soci-postgresql.h>
#include <soci/soci.h>
#include <soci/sqlite3/soci-sqlite3.h>

#include <optional>
#include <string>

#include "store/dialect.hpp"
#include "store/fault.hpp"

using namespace notesd;

namespace {

std::optional<StoreFault> sqlite_fault(int rc) {
    return make_dialect(Backend::Sqlite)->fault_of(soci::sqlite3_soci_error("sqlite3: x", rc));
}

std::optional<StoreFault> mysql_fault(int err) {
    return make_dialect(Backend::MySql)->fault_of(soci::mysql_soci_error("x", err));
}

std::optional<StoreFault> pg_fault(const char* sqlstate) {
    return make_dialect(Backend::PostgreSql)
        ->fault_of(soci::postgresql_soci_error("x", sqlstate));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fault)

// Primary codes and extended ones (the low byte is the primary code).
BOOST_AUTO_TEST_CASE(sqlite_codes) {
    BOOST_CHECK(sqlite_fault(5) == StoreFault::Busy);            // SQLITE_BUSY
    BOOST_CHECK(sqlite_fault(5 | (2 << 8)) == StoreFault::Busy);  // SQLITE_BUSY_SNAPSHOT
    BOOST_CHECK(sqlite_fault(6) == StoreFault::Busy);            // SQLITE_LOCKED
    BOOST_CHECK(sqlite_fault(15) == StoreFault::Busy);           // SQLITE_PROTOCOL
    BOOST_CHECK(sqlite_fault(13) == StoreFault::DiskFull);       // SQLITE_FULL
    BOOST_CHECK(sqlite_fault(8) == StoreFault::ReadOnly);        // SQLITE_READONLY
    BOOST_CHECK(sqlite_fault(8 | (4 << 8)) == StoreFault::ReadOnly);  // SQLITE_READONLY_DBMOVED
    BOOST_CHECK(sqlite_fault(3) == StoreFault::ReadOnly);        // SQLITE_PERM
    BOOST_CHECK(sqlite_fault(10) == StoreFault::IoError);        // SQLITE_IOERR
    BOOST_CHECK(sqlite_fault(10 | (3 << 8)) == StoreFault::IoError);  // SQLITE_IOERR_WRITE
    BOOST_CHECK(sqlite_fault(14) == StoreFault::CannotOpen);     // SQLITE_CANTOPEN
    BOOST_CHECK(sqlite_fault(7) == StoreFault::OutOfResources);  // SQLITE_NOMEM
    // the program's or the data's, not the environment's: a 500
    for (int rc : {1, 11, 19, 21, 26})  // ERROR, CORRUPT, CONSTRAINT, MISUSE, NOTADB
        BOOST_CHECK_MESSAGE(!sqlite_fault(rc), "sqlite code " << rc);
    // another backend's error is none of SQLite's, and SOCI's own are by their category
    BOOST_CHECK(!make_dialect(Backend::Sqlite)->fault_of(soci::mysql_soci_error("x", 1062)));
    BOOST_CHECK(!make_dialect(Backend::Sqlite)->fault_of(soci::soci_error("x")));
}

BOOST_AUTO_TEST_CASE(mysql_codes) {
    for (int e : {2002, 2003, 2006, 2013, 2055, 1053, 1927, 1158, 1161, 4031})
        BOOST_CHECK_MESSAGE(mysql_fault(e) == StoreFault::ConnectionLost, "mysql error " << e);
    BOOST_CHECK(mysql_fault(1205) == StoreFault::Busy);       // lock wait timeout
    BOOST_CHECK(mysql_fault(1213) == StoreFault::Busy);       // deadlock
    BOOST_CHECK(mysql_fault(1969) == StoreFault::Timeout);    // max_statement_time
    BOOST_CHECK(mysql_fault(1021) == StoreFault::DiskFull);
    BOOST_CHECK(mysql_fault(1114) == StoreFault::DiskFull);   // the table is full
    BOOST_CHECK(mysql_fault(1290) == StoreFault::ReadOnly);   // --read-only
    BOOST_CHECK(mysql_fault(1836) == StoreFault::ReadOnly);
    BOOST_CHECK(mysql_fault(1030) == StoreFault::IoError);    // the storage engine's errno
    BOOST_CHECK(mysql_fault(1040) == StoreFault::OutOfResources);  // too many connections
    for (int e : {1062, 1064, 1146, 1054, 1045, 1049})  // duplicate, syntax, no table/column, access
        BOOST_CHECK_MESSAGE(!mysql_fault(e), "mysql error " << e);
    // SOCI's own connection errors carry no server number
    soci::soci_error plain("no connection");
    BOOST_CHECK(!make_dialect(Backend::MySql)->fault_of(plain));
}

BOOST_AUTO_TEST_CASE(postgresql_sqlstates) {
    for (const char* st : {"08000", "08006", "08P01", "57P01", "57P02", "57P03", "57P05", "25P03",
                           "26000", "     "})
        BOOST_CHECK_MESSAGE(pg_fault(st) == StoreFault::ConnectionLost, "sqlstate " << st);
    BOOST_CHECK(pg_fault("40001") == StoreFault::Busy);  // serialization failure
    BOOST_CHECK(pg_fault("40P01") == StoreFault::Busy);  // deadlock
    BOOST_CHECK(pg_fault("55P03") == StoreFault::Busy);  // lock_timeout
    BOOST_CHECK(pg_fault("57014") == StoreFault::Timeout);
    BOOST_CHECK(pg_fault("53100") == StoreFault::DiskFull);
    BOOST_CHECK(pg_fault("53200") == StoreFault::OutOfResources);
    BOOST_CHECK(pg_fault("53300") == StoreFault::OutOfResources);
    BOOST_CHECK(pg_fault("25006") == StoreFault::ReadOnly);
    BOOST_CHECK(pg_fault("58030") == StoreFault::IoError);
    for (const char* st : {"23505", "42601", "42P01", "22P02", "28P01", "3D000", "57P04"})
        BOOST_CHECK_MESSAGE(!pg_fault(st), "sqlstate " << st);
    // libpq's failed connect, as SOCI 4.0 reports it
    soci::soci_error refused("Cannot establish connection to the database.\nconnection refused");
    BOOST_CHECK(make_dialect(Backend::PostgreSql)->fault_of(refused) == StoreFault::ConnectionLost);
}

BOOST_AUTO_TEST_CASE(what_the_store_does_with_each) {
    const StoreFault all[] = {StoreFault::Busy, StoreFault::Timeout, StoreFault::DiskFull,
                              StoreFault::ReadOnly, StoreFault::IoError, StoreFault::CannotOpen,
                              StoreFault::ConnectionLost, StoreFault::OutOfResources};
    std::string names;
    for (StoreFault f : all) names += std::string(fault_name(f)) + " ";
    BOOST_CHECK_EQUAL(names, "busy timeout disk_full read_only io_error cannot_open "
                             "connection_lost out_of_resources ");
    // a connection that may be broken, or opened read-only, is not used again
    for (StoreFault f : {StoreFault::ReadOnly, StoreFault::IoError, StoreFault::CannotOpen,
                         StoreFault::ConnectionLost})
        BOOST_CHECK_MESSAGE(needs_new_connection(f), fault_name(f));
    for (StoreFault f : {StoreFault::Busy, StoreFault::Timeout, StoreFault::DiskFull,
                         StoreFault::OutOfResources})
        BOOST_CHECK_MESSAGE(!needs_new_connection(f), fault_name(f));
    BOOST_CHECK(passes_by_itself(StoreFault::Busy));
    BOOST_CHECK(passes_by_itself(StoreFault::ConnectionLost));
    BOOST_CHECK(!passes_by_itself(StoreFault::DiskFull));
    BOOST_CHECK(!passes_by_itself(StoreFault::ReadOnly));
    const StoreUnavailable e(StoreFault::DiskFull, "disk_full during save_snapshot");
    BOOST_CHECK(e.fault() == StoreFault::DiskFull);
    BOOST_CHECK_EQUAL(std::string(e.what()), "disk_full during save_snapshot");
}

BOOST_AUTO_TEST_SUITE_END()
