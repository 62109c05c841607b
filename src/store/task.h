// store::task<T>: what every store call returns, an awaitable that resumes on
// the caller's executor (store/async.h).
#pragma once

#include <boost/asio/awaitable.hpp>

namespace tether::store {

template <class T>
using task = boost::asio::awaitable<T>;

}  // namespace tether::store
