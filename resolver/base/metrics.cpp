#include "resolver/base/metrics.hpp"

namespace glbd::metrics {

std::string escape(std::string_view v) {
    std::string o;
    o.reserve(v.size());
    for (char c : v) {
        if (c == '\\' || c == '"') {
            o += '\\';
            o += c;
        } else if (c == '\n') {
            o += "\\n";
        } else {
            o += c;
        }
    }
    return o;
}

std::string label(std::string_view name, std::string_view value) {
    std::string out(name);
    out += "=\"";
    out += escape(value);
    out += '"';
    return out;
}

void Writer::family(const char* name, const char* type, const char* help) {
    out_ << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
}

void Writer::sample(std::string_view name, std::string_view labels, double value) {
    out_ << name;
    if (!labels.empty()) out_ << "{" << labels << "}";
    out_ << " " << value << "\n";
}

void Writer::one(const char* name, const char* type, const char* help, double value) {
    family(name, type, help);
    sample(name, "", value);
}

void Writer::some(const char* name, const char* type, const char* help,
                  std::initializer_list<std::pair<const char*, double>> samples) {
    family(name, type, help);
    for (const auto& [labels, v] : samples) sample(name, labels, v);
}

}  // namespace glbd::metrics
