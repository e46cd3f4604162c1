// tools/read_text_file.hpp — reads a whole file into a string.
//
//   boost::system::result<std::string> text = ferrum::tools::read_text_file("plan.json");
//   if (!text) std::cerr << text.error().message();
#pragma once

#include <boost/system/result.hpp>

#include <string>

namespace ferrum::tools {

// Reads the file at `path`, byte for byte. Errors: the system error of the
// failing open or read (a directory fails with is_a_directory).
[[nodiscard]] boost::system::result<std::string> read_text_file(const std::string& path);

}  // namespace ferrum::tools
