#include "base/huge_pages.hpp"

#include <sys/mman.h>

#include <cstdint>

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

