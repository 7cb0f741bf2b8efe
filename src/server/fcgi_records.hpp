// FastCGI records as bytes, without libfcgi's request state: encoding a response, and a small
// incremental reader of one request (begin record, params, stdin). The master's status socket
// and `notesctl status` use it; the workers' connections go through libfcgi (fcgi_io).
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace notesd {

/// FCGI_STDOUT record(s) carrying payload, an empty FCGI_STDOUT and an FCGI_END_REQUEST.
std::string encode_fastcgi_records(int request_id, std::string_view payload);
/// One FastCGI request as a client sends it: BEGIN_REQUEST (responder), PARAMS, empty STDIN.
std::string encode_fastcgi_request(int request_id, const std::map<std::string, std::string>& params);

/// Reads one request from bytes as they arrive.
class FcgiRequestReader {
public:
    enum class State { more, done, bad };
    /// Appends bytes; done once the begin record, the params and the end of stdin are in.
    /// bad: a protocol error or more than max_bytes in all.
    State feed(const char* data, std::size_t n);
    int request_id() const { return request_id_; }
    /// A param's value, or "" when absent.
    std::string param(const std::string& name) const;

private:
    bool parse_params();
    std::string buf_, params_raw_;
    std::map<std::string, std::string> params_;
    int request_id_ = -1;
    bool params_done_ = false;
    State state_ = State::more;
    static constexpr std::size_t kMaxBytes = 64 * 1024;
};

/// Reads a response: the STDOUT payload until END_REQUEST.
class FcgiResponseReader {
public:
    enum class State { more, done, bad };
    State feed(const char* data, std::size_t n);
    const std::string& stdout_text() const { return out_; }

private:
    std::string buf_, out_;
    State state_ = State::more;
};

}  // namespace notesd
