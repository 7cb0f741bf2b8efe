// An allocator for large tables a worker builds once and keeps (a segment's notes table: 56
// bytes a note, 5.6 MB for 100,000 notes): blocks of 2 MB and more are mapped on their own,
// 2 MB-aligned and advised as transparent huge pages (the kernel's `madvise` mode, Debian's
// default), smaller ones come from operator new. On the benchmark machine (a virtualised guest)
// faulting in a fresh 4 KB page costs about 15 us: a user's first search in a worker paid 21 ms
// for the pages of one 100,000-note table alone, a 2 MB page takes about 0.2 ms (doc/benchmarks.md,
// "The first search after a restart"). Where the kernel gives no huge page the mapping
// simply stays in 4 KB pages. For a whole program's heap, glibc's own advice can be switched on
// (reexec_with_huge_page_heap).
#pragma once
#include <cstddef>
#include <new>
#include <optional>
#include <string>

namespace notesd {

/// The GLIBC_TUNABLES value that also asks glibc's malloc to advise its heaps as transparent
/// huge pages (`glibc.malloc.hugetlb=1`), or nothing when `current` (the variable's value, null
/// when unset) already says either way: the operator's choice stands.
std::optional<std::string> tunables_with_huge_page_heap(const char* current);

/// For a tool that builds a large working set in glibc's malloc (notesctl's import, pack and
/// rebuilds: about 0.6 GB at 100,000 notes, faulted in 4 KB pages about a tenth of an import's
/// time here; doc/benchmarks.md, "notesctl's page cache and heap"): re-executes the program
/// (the file /proc/self/exe names, the same argv) with tunables_with_huge_page_heap set, since
/// the dynamic loader reads the tunables only at start. Returns when they are set already or
/// the exec failed (the program then simply runs on with 4 KB pages).
void reexec_with_huge_page_heap(char** argv);

namespace detail {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
/// Whole 2 MB pages for `bytes` (at least kHugePage), or nullptr when the mapping failed.
void* map_huge(std::size_t bytes);
void unmap_huge(void* p, std::size_t bytes);
}  // namespace detail

template <class T>
struct HugePageAllocator {
    using value_type = T;
    HugePageAllocator() = default;
    template <class U>
    HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
        const std::size_t bytes = n * sizeof(T);
        if (bytes < detail::kHugePage) return static_cast<T*>(::operator new(bytes));
        void* p = detail::map_huge(bytes);
        if (!p) throw std::bad_alloc();
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        const std::size_t bytes = n * sizeof(T);
        if (bytes < detail::kHugePage)
            ::operator delete(p);
        else
            detail::unmap_huge(p, bytes);
    }
    template <class U>
    bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }
    template <class U>
    bool operator!=(const HugePageAllocator<U>&) const noexcept { return false; }
};

}  // namespace notesd
