// server/app/page — the status page at the admin endpoint's `/` (see README.md).
#pragma once

#include "server/app/admin.hpp"

namespace glbd::page {

// GET /: the page, with a Content-Security-Policy that allows exactly its inline script and style (by their
// SHA-256) and connections to this endpoint only. Built once; the same bytes every time.
const admin::Response& status_page();

}  // namespace glbd::page
