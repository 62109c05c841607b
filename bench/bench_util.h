// Shared by the benchmarks: latency statistics, an io_context on threads,
// JSON helpers. Header-only; each benchmark is its own executable.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include "util/result.h"

namespace tether::bench {

namespace asio = boost::asio;
namespace json = boost::json;
using steady = std::chrono::steady_clock;

// ---- statistics ----

struct latency_summary {
  double p50_us = 0, p90_us = 0, p95_us = 0, p99_us = 0, max_us = 0, mean_us = 0;
};

inline latency_summary summarize(std::vector<double> us) {
  latency_summary s;
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[static_cast<std::size_t>(q * static_cast<double>(us.size() - 1))]; };
  s.p50_us = at(0.50);
  s.p90_us = at(0.90);
  s.p95_us = at(0.95);
  s.p99_us = at(0.99);
  s.max_us = us.back();
  double sum = 0;
  for (double v : us) sum += v;
  s.mean_us = sum / static_cast<double>(us.size());
  return s;
}

// Whole microseconds and events: readable JSON, and finer digits are noise here.
inline std::int64_t whole(double v) { return std::llround(v); }

inline json::object to_json(const latency_summary& s) {
  return {{"p50_us", whole(s.p50_us)},
          {"p90_us", whole(s.p90_us)},
          {"p99_us", whole(s.p99_us)},
          {"max_us", whole(s.max_us)},
          {"mean_us", whole(s.mean_us)}};
}

inline double micros(steady::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// ---- an io_context run by two threads ----

class pool {
 public:
  explicit pool(int threads) : guard_(asio::make_work_guard(ioc_)) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { ioc_.run(); });
  }
  ~pool() {
    guard_.reset();
    for (auto& t : threads_) t.join();
  }
  asio::any_io_executor executor() { return ioc_.get_executor(); }

  // Runs an awaitable on the pool and blocks the calling (non-pool) thread
  // for its result.
  template <class T>
  T run(asio::awaitable<T> aw) {
    std::optional<T> out;
    std::promise<void> p;
    asio::co_spawn(ioc_, store_into(std::move(aw), &out), [&p](const std::exception_ptr& e) {
      if (e)
        p.set_exception(e);
      else
        p.set_value();
    });
    p.get_future().get();
    return std::move(*out);
  }
  void run(asio::awaitable<void> aw) {
    std::promise<void> p;
    asio::co_spawn(ioc_, std::move(aw), [&p](const std::exception_ptr& e) {
      if (e)
        p.set_exception(e);
      else
        p.set_value();
    });
    p.get_future().get();
  }

 private:
  template <class T>
  static asio::awaitable<void> store_into(asio::awaitable<T> aw, std::optional<T>* out) {
    out->emplace(co_await std::move(aw));
  }

  asio::io_context ioc_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::vector<std::thread> threads_;
};

[[noreturn]] inline void die(const std::string& what, const error& e) {
  std::fprintf(stderr, "bench: %s: %s\n", what.c_str(), e.describe().c_str());
  std::exit(1);
}

inline std::string now_iso8601() {
  const auto t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace tether::bench
