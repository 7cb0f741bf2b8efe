// notesd: parse argv, load and validate the configuration, run the supervisor. Nothing else.
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "base/config.hpp"
#include "base/log.hpp"
#include "server/config_check.hpp"
#include "server/supervisor.hpp"

#ifndef NOTESD_SYSCONFDIR
#define NOTESD_SYSCONFDIR "/etc"
#endif
#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

// `make pgo` builds the release a second time with the profile of a training run.
#ifdef NOTESD_PROFILE_USE
constexpr char kBuildKind[] = " (profile-guided build)";
#elif defined(NOTESD_PROFILE_GENERATE)
constexpr char kBuildKind[] = " (instrumented build: make pgo's training run)";
#else
constexpr char kBuildKind[] = "";
#endif

namespace {

constexpr int kExitUsage = 2;

struct Options {
    std::string config_path;  // empty: the default path, which may be missing
    std::vector<std::pair<std::string, std::string>> overrides;  // in command-line order
    bool check_only = false;
};

const char kUsage[] =
    "usage: notesd [--config PATH] [--set KEY=VALUE]... [--workers N] [--listen ADDR]\n"
    "              [--db CONN] [--check-config] [--help] [--version]\n"
    "\n"
    "  --config PATH     configuration file (default " NOTESD_SYSCONFDIR "/notesd.conf;\n"
    "                    built-in defaults when that default file does not exist)\n"
    "  --set KEY=VALUE   override one configuration key (repeatable; see notesd.conf(5))\n"
    "  --workers N       same as --set workers=N\n"
    "  --listen ADDR     same as --set listen=ADDR (unix socket path, host:port or :port)\n"
    "  --db CONN         same as --set db=CONN (e.g. sqlite3://db=/path/notes.db)\n"
    "  --check-config    print every configuration problem (or \"configuration ok\") and exit\n"
    "  --help            show this help\n"
    "  --version         show the version\n"
    "\n"
    "The environment variable NOTESD_DB, when set, overrides db from the file.\n"
    "Signals to the master: SIGTERM/SIGINT stop gracefully, SIGHUP reloads the configuration.\n";

[[noreturn]] void usage_error(const std::string& msg) {
    std::cerr << "notesd: " << msg << "\n" << kUsage;
    std::exit(kExitUsage);
}

// Accepts "--opt VALUE" and "--opt=VALUE".
bool take_value(int argc, char** argv, int& i, const std::string& name, std::string& out) {
    const std::string arg = argv[i];
    if (arg == name) {
        if (i + 1 >= argc) usage_error(name + " needs a value");
        out = argv[++i];
        return true;
    }
    if (arg.rfind(name + "=", 0) == 0) {
        out = arg.substr(name.size() + 1);
        return true;
    }
    return false;
}

Options parse_args(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        std::string v;
        if (arg == "--help" || arg == "-h") {
            std::cout << kUsage;
            std::exit(0);
        } else if (arg == "--version") {
            std::cout << "notesd " << PACKAGE_VERSION << kBuildKind << "\n";
            std::exit(0);
        } else if (arg == "--check-config") {
            o.check_only = true;
        } else if (take_value(argc, argv, i, "--config", v)) {
            o.config_path = v;
        } else if (take_value(argc, argv, i, "--set", v)) {
            const auto eq = v.find('=');
            if (eq == std::string::npos || eq == 0) usage_error("--set expects KEY=VALUE");
            o.overrides.emplace_back(v.substr(0, eq), v.substr(eq + 1));
        } else if (take_value(argc, argv, i, "--workers", v)) {
            o.overrides.emplace_back("workers", v);
        } else if (take_value(argc, argv, i, "--listen", v)) {
            o.overrides.emplace_back("listen", v);
        } else if (take_value(argc, argv, i, "--db", v)) {
            o.overrides.emplace_back("db", v);
        } else {
            usage_error("unknown argument '" + arg + "'");
        }
    }
    return o;
}

// Precedence, lowest first: built-in defaults, the file, NOTESD_DB, the command line.
// Used at start-up and again on every SIGHUP.
notesd::Config load(const Options& o, std::vector<std::string>& problems) {
    using notesd::apply_setting;
    notesd::Config c;
    const bool explicit_path = !o.config_path.empty();
    const std::string path = explicit_path ? o.config_path : NOTESD_SYSCONFDIR "/notesd.conf";
    const bool missing_default = !explicit_path && access(path.c_str(), F_OK) != 0 && errno == ENOENT;
    if (!missing_default) {
        try {
            c = notesd::load_config(path);
        } catch (const std::exception& e) {
            problems.push_back(e.what());
        }
    }
    c.path = path;
    if (const char* db = std::getenv("NOTESD_DB"); db && *db) {
        const std::string p = apply_setting(c, "db", db);
        if (!p.empty()) problems.push_back("NOTESD_DB: " + p);
    }
    for (const auto& [key, value] : o.overrides) {
        const std::string p = apply_setting(c, key, value);
        if (!p.empty()) problems.push_back("command line: " + p);
    }
    for (auto& p : notesd::check_config(c)) problems.push_back(std::move(p));
    return c;
}

}  // namespace

int main(int argc, char** argv) {
#if !defined(NOTESD_TCMALLOC) && defined(M_TRIM_THRESHOLD)
    // Built with glibc's malloc (configure --without-tcmalloc; tcmalloc keeps freed memory in
    // its own caches and ignores mallopt). A search allocates and frees a few MB (postings,
    // candidates) every time. glibc's defaults hand such blocks to mmap() or trim the heap
    // after them, so the next request faults the same pages in again (zeroed by the kernel).
    // Workers keep them instead: a worker's heap stays at its high-water mark, and workers are
    // replaced every max_requests anyway.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_TOP_PAD, 16 << 20);
#endif
    const Options opts = parse_args(argc, argv);
    std::vector<std::string> problems;
    const notesd::Config cfg = load(opts, problems);
    if (opts.check_only) {
        for (const auto& p : problems) std::cerr << p << "\n";
        if (!problems.empty()) {
            std::cerr << cfg.path << ": " << problems.size() << " problem"
                      << (problems.size() == 1 ? "" : "s") << "\n";
            return 1;
        }
        std::cout << "configuration ok\n";
        return 0;
    }
    if (!problems.empty()) {
        for (const auto& p : problems) notesd::log_error("configuration problem", {{"problem", p}});
        notesd::log_error("not starting: invalid configuration", {{"path", cfg.path}});
        return 1;
    }
    notesd::LogLevel level = notesd::LogLevel::info;
    notesd::parse_log_level(cfg.log_level, level);
    notesd::set_log_level(level);
    const notesd::ConfigReloader reloader = [opts](std::vector<std::string>& p) { return load(opts, p); };
    return notesd::run_supervisor(cfg, reloader);
}
