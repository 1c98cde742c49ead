// The daemon's reloads (SIGHUP): the file validated again, everything that can fail tried before anything
// changes, and the keys' check; a change that drops a KSK waits for the parent's servers, asked on a worker
// thread while the control thread serves on (/readyz, /metrics, the admin API), then concludes here. Control
// thread but for that worker.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "server/app/daemon.hpp"
#include "server/app/options.hpp"
#include "sync/local_view.hpp"

namespace glbd {

void Daemon::init_reloads() {
    uv_async_init(loop_, &parent_answered_, [](uv_async_t* a) { static_cast<Daemon*>(a->data)->conclude_reload(); });
    parent_answered_.data = this;
}

// At the stop: a worker still asking is waited for (its questions end within their budget); what it brings
// is not applied.
void Daemon::close_reloads() {
    if (parent_asker_.joinable()) parent_asker_.join();
    pending_reload_.reset();
    uv_close(reinterpret_cast<uv_handle_t*>(&parent_answered_), nullptr);
}

Daemon::Reload Daemon::reload() {
    if (path_.empty()) {
        spdlog::warn("reload: the embedded config cannot be reloaded");
        return Reload::refused;
    }
    if (pending_reload_) {
        reload_again_ = true;
        spdlog::info("reload: one waits for the parent's servers; this one follows it");
        return Reload::pending;
    }
    auto result = conf::load_file(path_);
    if (!result.config) {
        ++reloads_failed_;
        for (const auto& e : result.errors) spdlog::error("reload rejected: {}", e.str());
        spdlog::error("reload failed: {} error(s); still serving the previous config", result.errors.size());
        return Reload::refused;
    }
    conf::Config& next = *result.config;
    std::shared_ptr<const geo::GeoDb> geo;
    try {
        // Everything that can fail (the geo database, the zones) before touching the running state.
        geo = open_geo(next);
        build_snapshot(next, {local_view(next, {})}, geo, serial_);  // a zone that cannot be built fails here
    } catch (const std::exception& e) {
        ++reloads_failed_;
        spdlog::error("reload failed: {}; still serving the previous config", e.what());
        return Reload::refused;
    }
    auto questions = keys_.precheck(config_, next, *sync_);
    if (!questions) {
        ++reloads_failed_;
        spdlog::error("reload refused: {}; still serving the previous config", questions.error());
        return Reload::refused;
    }
    if (questions->empty()) {
        apply_reload(std::move(next), std::move(geo));
        return Reload::applied;
    }
    // The parent's servers, all at once over TCP within one budget, on a thread of their own.
    pending_reload_ = PendingReload{std::move(next), std::move(geo), std::move(*questions)};
    if (parent_asker_.joinable()) parent_asker_.join();  // the last one's, long done
    parent_asker_ = std::thread([this, asked = pending_reload_->questions] {
        auto answers = KeyGovernance::ask_parents(asked, KeyGovernance::kParentBudgetMs);
        {
            MutexLock lock(parent_mu_);
            parent_answers_ = std::move(answers);
        }
        uv_async_send(&parent_answered_);
    });
    spdlog::info("reload: a KSK goes; asking the parent's servers (at most {} s)",
                 KeyGovernance::kParentBudgetMs / 1000);
    return Reload::pending;
}

void Daemon::conclude_reload() {
    std::optional<KeyGovernance::ParentAnswers> answers;
    {
        MutexLock lock(parent_mu_);
        answers.swap(parent_answers_);
    }
    if (!answers || !pending_reload_) return;
    if (parent_asker_.joinable()) parent_asker_.join();
    PendingReload pending = std::move(*pending_reload_);
    pending_reload_.reset();
    if (auto allowed = keys_.conclude(pending.questions, *answers); !allowed) {
        ++reloads_failed_;
        spdlog::error("reload refused: {}; still serving the previous config", allowed.error());
    } else {
        apply_reload(std::move(pending.next), std::move(pending.geo));
    }
    notifier_.ready();
    if (std::exchange(reload_again_, false) && reload() != Reload::pending) notifier_.ready();
}

void Daemon::apply_reload(conf::Config next, std::shared_ptr<const geo::GeoDb> geo) {
    ++reloads_ok_;
    bool same_listen = next.listen.dns.size() == config_.listen.dns.size() &&
                       std::equal(config_.listen.dns.begin(), config_.listen.dns.end(), next.listen.dns.begin());
    if (!same_listen) spdlog::warn("reload: listen addresses changed; they take effect at the next restart");
    auto previous = checker_->states();
    if (static_cast<bool>(next.kubernetes) != static_cast<bool>(config_.kubernetes)) {
        spdlog::warn("reload: the kubernetes section changed; it takes effect at the next restart");
    }
    cookies_.configure(next.listen.cookie_secret);
    config_ = std::move(next);
    ++hosts_generation_;
    if (kube_) {
        kube_->reload(config_);  // the file's hosts it merges with, and the zones
        kube_->merge(config_, *sync_);
    }
    geo_ = std::move(geo);
    start_checker(previous);
    sync_->reconfigure(config_);
    keys_.note_published(config_);
    rebuild();
    auto snap = publisher_.current();
    spdlog::info("reloaded {}: serial {}, {} zone(s), {} host(s)", path_, snap->serial, snap->zones.size(),
                 snap->hosts.size());
}

}  // namespace glbd
