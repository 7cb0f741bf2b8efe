// The FastCGI transport: the only module that includes <fcgiapp.h>. It turns one FastCGI request
// into a plain HttpRequest and an HttpResponse back into bytes.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "api/http.hpp"
#include "server/fcgi_records.hpp"

namespace notesd {

/// One request as read from the connection: either a request for the application, or a
/// ready-made error response (400 bad Content-Length, 413 body too large, short body).
struct IncomingRequest {
    HttpRequest request;
    std::optional<HttpResponse> rejection;
};

/// What accept() found on the listening socket.
enum class AcceptResult {
    request,       // a request whose params are read: call read_request
    none,          // no connection after all (another worker took it, or a signal)
    input_failed,  // a connection whose begin record or params stalled past io_timeout_ms,
                   // ended early or broke the protocol: closed, nothing to answer
    error,         // the listening socket failed (error_number() says why)
};

/// A worker's FastCGI endpoint on the shared listening socket (one request at a time).
class FcgiEndpoint {
public:
    /// Calls FCGX_Init and FCGX_InitRequest; throws std::runtime_error on failure.
    /// io_timeout_ms bounds every read of a request's input and every write of its response.
    FcgiEndpoint(int listen_fd, int io_timeout_ms);
    ~FcgiEndpoint();
    FcgiEndpoint(const FcgiEndpoint&) = delete;
    FcgiEndpoint& operator=(const FcgiEndpoint&) = delete;

    /// Accepts the next connection and reads its begin record and params.
    AcceptResult accept();
    /// errno of the last AcceptResult::error.
    int error_number() const;
    /// Copies the params out (libfcgi frees them at Finish) and reads the body with the cap
    /// max_body_bytes(request) gives for its method and path.
    /// A body that stalls past io_timeout_ms is a 400 (input_timed_out() is then true).
    IncomingRequest read_request(const std::function<std::size_t(const HttpRequest&)>& max_body_bytes);
    /// Whether the current request's input stalled past io_timeout_ms.
    bool input_timed_out() const;
    /// Writes `Status:`, headers, blank line and body in one FCGX_PutStr; false if the client left.
    bool write_response(const HttpResponse& r);
    /// The complete FastCGI records (STDOUT, empty STDOUT, END_REQUEST) that answer the current
    /// request with r, for writing straight to connection_fd() from a signal handler.
    std::string raw_response(const HttpResponse& r) const;
    /// The current connection's descriptor (valid between accept() and finish()), or -1.
    int connection_fd() const;
    /// FCGX_Finish_r: flushes the response and closes the connection; a no-op when already done.
    void finish();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Finishes the current request when the scope ends, so nginx has the response before we log.
class FcgiRequestGuard {
public:
    explicit FcgiRequestGuard(FcgiEndpoint& ep) : ep_(ep) {}
    ~FcgiRequestGuard() { ep_.finish(); }
    FcgiRequestGuard(const FcgiRequestGuard&) = delete;
    FcgiRequestGuard& operator=(const FcgiRequestGuard&) = delete;

private:
    FcgiEndpoint& ep_;
};

/// The HTTP reason phrase for a status code ("Unknown" for codes we never send).
const char* reason_phrase(int status);
/// CGI response text: "Status: NNN Reason\r\n", each header, "\r\n", then the body.
std::string encode_cgi_response(const HttpResponse& r);
/// Strict CONTENT_LENGTH: empty means 0; digits only (at most 18); nullopt otherwise.
std::optional<std::size_t> parse_content_length(std::string_view v);

}  // namespace notesd
