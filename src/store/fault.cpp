#include "store/fault.hpp"

namespace notesd {

const char* fault_name(StoreFault f) {
    switch (f) {
        case StoreFault::Busy: return "busy";
        case StoreFault::Timeout: return "timeout";
        case StoreFault::DiskFull: return "disk_full";
        case StoreFault::ReadOnly: return "read_only";
        case StoreFault::IoError: return "io_error";
        case StoreFault::CannotOpen: return "cannot_open";
        case StoreFault::ConnectionLost: return "connection_lost";
        case StoreFault::OutOfResources: return "out_of_resources";
    }
    return "unknown";
}

bool needs_new_connection(StoreFault f) {
    switch (f) {
        case StoreFault::ReadOnly: case StoreFault::IoError: case StoreFault::CannotOpen:
        case StoreFault::ConnectionLost:
            return true;
        case StoreFault::Busy: case StoreFault::Timeout: case StoreFault::DiskFull:
        case StoreFault::OutOfResources:
            return false;
    }
    return true;
}

bool passes_by_itself(StoreFault f) {
    switch (f) {
        case StoreFault::Busy: case StoreFault::Timeout: case StoreFault::ConnectionLost:
        case StoreFault::OutOfResources:
            return true;
        case StoreFault::DiskFull: case StoreFault::ReadOnly: case StoreFault::IoError:
        case StoreFault::CannotOpen:
            return false;
    }
    return false;
}

}  // namespace notesd
