#include "text_table.hpp"

#include <algorithm>

namespace ferrum::tools {

text_table::text_table(std::vector<column> columns) : columns_(std::move(columns)) {}

void text_table::add_row(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

void text_table::write(std::ostream& out, std::size_t indent) const {
  std::vector<std::size_t> widths;
  for (const column& c : columns_) widths.push_back(c.header.size());
  for (const auto& row : rows_)
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());

  const auto write_line = [&](const auto& cell_of) {
    std::string line(indent, ' ');
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      const std::string& cell = cell_of(i);
      const std::string pad(widths[i] - cell.size(), ' ');
      if (i > 0) line += "  ";
      line += columns_[i].align == align::right ? pad + cell : cell + pad;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  };
  write_line([&](std::size_t i) -> const std::string& { return columns_[i].header; });
  for (const auto& row : rows_) write_line([&](std::size_t i) -> const std::string& { return row[i]; });
}

}  // namespace ferrum::tools
