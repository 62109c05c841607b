#include "runtime/native/native_runtime.h"

#include <boost/asio/thread_pool.hpp>

#include "model/runtime_kinds.h"
#include "runtime/native/turn.h"

namespace tether::runtime::native {

struct native_runtime::impl {
  explicit impl(native_options o) : options(std::move(o)), model(make_provider(options.provider)), tools(make_local_tools()) {
    if (options.blocking) {
      blocking = options.blocking;
    } else {
      own_pool.emplace(2);
      blocking = own_pool->get_executor();
    }
  }
  ~impl() {
    if (own_pool) own_pool->join();
  }
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  native_options options;
  std::unique_ptr<provider> model;
  tool_set tools;
  std::optional<boost::asio::thread_pool> own_pool;
  boost::asio::any_io_executor blocking;
};

native_runtime::native_runtime(native_options o) : impl_(std::make_unique<impl>(std::move(o))) {}
native_runtime::~native_runtime() = default;

const native_options& native_runtime::options() const { return impl_->options; }

std::string native_runtime::name(std::string_view) const { return std::string(model::runtime_kind::native); }

// The native runtime keeps nothing between turns beyond its provider's
// connection pool and its tool pool, which live as long as it does; a turn's
// state is all in the session's log.
session::task<result<void>> native_runtime::start() { co_return ok(); }
session::task<void> native_runtime::stop() { co_return; }
session::task<void> native_runtime::forget(session_id) { co_return; }

session::task<session::turn_result> native_runtime::run_turn(session::turn_context ctx,
                                                             std::shared_ptr<session::turn_host> host) {
  std::shared_ptr<session::turn_place> place = ctx.place;
  turn t(runtime_parts{impl_->options, *impl_->model, impl_->tools, impl_->blocking}, std::move(ctx), std::move(host));
  session::turn_result r = co_await t.run();
  if (!place) co_return r;
  // In an environment the file tools wrote the host copy; what they wrote
  // after the turn's last command goes there now, or the workspace that
  // comes back at the turn's end (node/leased_runtime.h) would lose it.
  result<void> sent = co_await place->send_workspace(false);
  if (!sent && r.status != session::turn_status::interrupted) {
    r.status = session::turn_status::failed;
    r.error = (r.error.empty() ? std::string() : r.error + "; ") + "the workspace could not be sent to environment " +
              place->environment() + ": " + sent.error().message;
  }
  co_return r;
}

std::unique_ptr<native_runtime> make_native_runtime(native_options o) {
  return std::make_unique<native_runtime>(std::move(o));
}

}  // namespace tether::runtime::native
