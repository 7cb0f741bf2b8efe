// The application: one per worker process, created after fork. Turns a request into a response.
#pragma once
#include <memory>

#include "base/config.hpp"
#include "api/http.hpp"
#include "base/model.hpp"

namespace notesd {

class Store;
class CursorCodec;
struct Route;

class App {
public:
    /// Opens the store lazily on the first request, so a database outage never kills a worker.
    explicit App(const Config& cfg);
    ~App();
    App(const App&) = delete;
    App& operator=(const App&) = delete;
    /// Never throws: every failure becomes a JSON error response.
    HttpResponse handle(const HttpRequest& req);
    /// Work left for after a response is sent (the store's housekeeping); never throws.
    void after_response() noexcept;

private:
    Store& store();
    HttpResponse dispatch(const HttpRequest& req, const Route& route, const Principal& who);
    Config cfg_;
    std::unique_ptr<Store> store_;
    std::unique_ptr<CursorCodec> cursors_;
};

}  // namespace notesd
