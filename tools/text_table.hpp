// tools/text_table.hpp — a plain-text table with aligned columns, for the
// `ferrum` command's human-readable output.
//
//   ferrum::tools::text_table t({{"pool", align::left}, {"bytes", align::right}});
//   t.add_row({"pool/scratch", "16384"});
//   t.write(std::cout, 2);  // a header row, then the rows, indented by 2
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace ferrum::tools {

enum class align { left, right };

class text_table {
 public:
  struct column {
    std::string header;
    tools::align align = align::left;
  };

  explicit text_table(std::vector<column> columns);

  // Adds a row; missing trailing cells are empty, extra cells are dropped.
  void add_row(std::vector<std::string> cells);

  // Writes the header and the rows, each line indented by `indent` spaces,
  // columns two spaces apart, no trailing blanks.
  void write(std::ostream& out, std::size_t indent = 0) const;

 private:
  std::vector<column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace ferrum::tools
