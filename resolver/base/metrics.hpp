// resolver/base/metrics — the Prometheus text exposition format (version 0.0.4), written family by family.
// Each module renders its own counters with it (server/net, sync, sync/health, sync/kube); server/app puts
// them together for GET /metrics. Control thread; allocates.
#pragma once

#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

namespace glbd::metrics {

// A label value as the format wants it: backslash, quote and newline escaped.
std::string escape(std::string_view value);
// `name="value"` with the value escaped.
std::string label(std::string_view name, std::string_view value);

class Writer {
public:
    // A family's HELP and TYPE lines; its samples follow.
    void family(const char* name, const char* type, const char* help);
    // One sample: `labels` is a ready label list (`a="x",b="y"`) or empty.
    void sample(std::string_view name, std::string_view labels, double value);
    // A family of one sample without labels.
    void one(const char* name, const char* type, const char* help, double value);
    // A family of a few samples, each with its labels.
    void some(const char* name, const char* type, const char* help,
              std::initializer_list<std::pair<const char*, double>> samples);
    [[nodiscard]] std::string str() const { return out_.str(); }

private:
    std::ostringstream out_;
};

}  // namespace glbd::metrics
