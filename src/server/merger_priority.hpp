// The background merger's CPU priority (issue 18's writes beside the merges). Folds and merges
// are CPU work no request waits for, and on a machine the requests keep busy they took about
// half of it: at the same priority as the workers the merger halved the write throughput
// (doc/benchmarks.md, "The merger behind the requests"). So it computes at a lower priority
// (merge_nice) and takes its own back around each write transaction of a step: a merger the
// scheduler put behind the workers must not keep their writes waiting on a lock it holds
// (priority inheritance, done by hand). It takes its own back as well while a user's index is
// behind (many pending notes or segments), so that sustained writes cannot starve it.
#pragma once
#include "store/store.hpp"

namespace notesd {

class MergerPriority : public StepWriteListener {
public:
    /// nice: added to the process's nice value while computing (0: no change; at most 19 in
    /// all). The lower priority is used only where the process may take its own back
    /// afterwards (root, CAP_SYS_NICE, or an RLIMIT_NICE that allows it, as systemd's
    /// LimitNICE= sets it); usable() says whether it is.
    explicit MergerPriority(int nice);
    MergerPriority(const MergerPriority&) = delete;
    MergerPriority& operator=(const MergerPriority&) = delete;
    bool usable() const { return usable_; }
    int own() const { return own_; }  ///< the nice value the process started with
    /// The nice value it computes at: own() when not usable().
    int computing() const { return usable_ ? low_ : own_; }
    /// The nice value the calling thread runs at now.
    static int current();

    void before_write() override;
    void after_write() override;
    /// While behind, the merger runs at its own priority throughout.
    void set_behind(bool behind);

private:
    void apply();
    int own_ = 0, low_ = 0;
    bool usable_ = false, writing_ = false, behind_ = false;
};

}  // namespace notesd
