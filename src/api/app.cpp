#include "api/app.hpp"

#include "api/auth.hpp"
#include "api/cursor.hpp"
#include "api/errors.hpp"
#include "api/handlers/handlers.hpp"
#include "api/router.hpp"
#include "base/log.hpp"
#include "base/phase_clock.hpp"
#include "store/store.hpp"

namespace notesd {
namespace {

// Retry-After of a fault an operator has to end (a full disk, a read-only or unopenable file):
// clients need not come back every second meanwhile.
constexpr int kRetryAfterOperatorFaultS = 5;

}  // namespace

App::App(const Config& cfg)
    : cfg_(cfg), cursors_(std::make_unique<CursorCodec>(effective_secret(cfg))) {}

App::~App() = default;

void App::after_response() noexcept {
    if (store_) store_->housekeeping();
}

Store& App::store() {
    if (!store_) {
        // A database that cannot be reached or opened is a StoreUnavailable: no store yet,
        // and the next request tries again.
        std::unique_ptr<Store> s =
            open_store(cfg_.db, cfg_.db_busy_timeout_ms, cfg_.db_connect_timeout_s);
        s->defer_housekeeping();  // the worker calls after_response between requests
        store_ = std::move(s);
    }
    return *store_;
}

HttpResponse App::handle(const HttpRequest& req) {
    long long user_id = 0;
    int endpoint = -1;  // for the metrics, also when the request fails after routing
    try {
        const Endpoint ep = route(req.method, req.path);
        endpoint = endpoint_index(ep);
        const Principal who = authenticate(req.authorization, store());
        user_id = who.user_id;
        mark_phase(Phase::parse);
        HttpResponse r;
        switch (ep) {
            case Endpoint::ListNotes: r = list_notes(req, who, store(), *cursors_); break;
            case Endpoint::ListCollections: r = list_collections(req, who, store(), *cursors_); break;
            case Endpoint::SearchNotes:
                r = search_notes(req, who, store(), SearchSettings{cfg_.snapshot_ttl_s});
                break;
        }
        add_standard_headers(r, req.request_id);
        r.user_id = user_id;
        r.endpoint = endpoint;
        return r;
    } catch (const ApiError& e) {
        HttpResponse r = render_error(e, req.request_id);
        r.user_id = user_id;
        r.endpoint = endpoint;
        return r;
    } catch (const StoreUnavailable& e) {
        // The store has classified the fault and opens a new connection itself where the
        // fault needs one (store/fault.hpp): the worker recovers once the fault is gone. What()
        // holds no SQL or bound values.
        log_event(LogLevel::warn, req.request_id, "database unavailable",
                  {{"fault", fault_name(e.fault())}, {"detail", e.what()}});
        const int retry_after_s = passes_by_itself(e.fault()) ? 1 : kRetryAfterOperatorFaultS;
        HttpResponse r = render_error(
            unavailable("the database is unavailable; retry shortly", retry_after_s),
            req.request_id);
        r.user_id = user_id;
        r.endpoint = endpoint;
        return r;
    } catch (const std::exception& e) {
        // The store converts database errors to safe messages, so what() holds no bound values.
        log_event(LogLevel::error, req.request_id, "internal error", {{"detail", e.what()}});
        store_.reset();
        HttpResponse r = render_error(
            ApiError(500, "INTERNAL_ERROR", "an internal error occurred; it has been logged"),
            req.request_id);
        r.user_id = user_id;
        r.endpoint = endpoint;
        return r;
    }
}

}  // namespace notesd
