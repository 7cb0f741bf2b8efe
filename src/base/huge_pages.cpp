#include "base/huge_pages.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace notesd::detail {
namespace {

std::size_t whole_pages(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

}  // namespace

// Maps one huge page more than needed and gives back the unaligned head and the tail, so the
// block starts on a 2 MB boundary: only aligned 2 MB ranges can be huge pages.
void* map_huge(std::size_t bytes) {
    const std::size_t size = whole_pages(bytes);
    void* raw = ::mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    const auto start = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
    if (aligned > start) ::munmap(raw, aligned - start);
    const std::uintptr_t end = start + size + kHugePage;
    if (end > aligned + size) ::munmap(reinterpret_cast<void*>(aligned + size), end - aligned - size);
    void* p = reinterpret_cast<void*>(aligned);
    ::madvise(p, size, MADV_HUGEPAGE);  // advice: without it (THP off) the block still works
    return p;
}

void unmap_huge(void* p, std::size_t bytes) { ::munmap(p, whole_pages(bytes)); }

}  // namespace notesd::detail

namespace notesd {

std::optional<std::string> tunables_with_huge_page_heap(const char* current) {
    const std::string_view now = current ? current : "";
    if (now.find("glibc.malloc.hugetlb=") != std::string_view::npos) return std::nullopt;
    std::string out(now);
    if (!out.empty()) out += ':';
    return out + "glibc.malloc.hugetlb=1";
}

void reexec_with_huge_page_heap(char** argv) {
    const char* current = std::getenv("GLIBC_TUNABLES");
    const std::optional<std::string> wanted = tunables_with_huge_page_heap(current);
    if (!wanted) return;
    const std::optional<std::string> before = current ? std::optional<std::string>(current) : std::nullopt;
    // The resolved path rather than /proc/self/exe itself, which would rename the process
    // "exe" (ps, top, pkill notesctl).
    char self[4096];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || static_cast<std::size_t>(n) >= sizeof self - 1) return;
    self[n] = '\0';
    if (::setenv("GLIBC_TUNABLES", wanted->c_str(), 1) != 0) return;
    ::execv(self, argv);
    if (before) ::setenv("GLIBC_TUNABLES", before->c_str(), 1);  // exec failed: as it was
    else ::unsetenv("GLIBC_TUNABLES");
}

}  // namespace notesd
