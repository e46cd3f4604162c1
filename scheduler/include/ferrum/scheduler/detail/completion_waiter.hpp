// ferrum/scheduler/detail/completion_waiter.hpp — one pending
// async_shutdown or async_replace (internal).
#pragma once

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/system/error_code.hpp>

namespace ferrum::detail {

// The handler, and the outstanding work of the executor it will run on (its
// associated executor, or the scheduler's), held until it is posted there.
struct completion_waiter {
  boost::asio::any_completion_handler<void(boost::system::error_code)> handler;
  boost::asio::any_io_executor work;
};

}  // namespace ferrum::detail
