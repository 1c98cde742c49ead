// tests/fuzz/scratch — a file or directory under /tmp that a target makes once and that goes when the
// process exits: libFuzzer's end (-max_total_time, -runs) and the replay runner both leave by exit(), which
// runs static destructors. A crash leaves it behind, beside the crash's input.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

namespace glbd::fuzz {

class Scratch {
public:
    explicit Scratch(std::string path) : path_(std::move(path)) {}
    ~Scratch() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    [[nodiscard]] const std::string& path() const { return path_; }

    // A fresh directory "/tmp/<prefix>XXXXXX" (mkdtemp); aborts when none can be made.
    static std::string directory(const std::string& prefix) {
        std::string t = "/tmp/" + prefix + "XXXXXX";
        if (mkdtemp(t.data()) == nullptr) std::abort();
        return t;
    }

private:
    std::string path_;
};

}  // namespace glbd::fuzz
