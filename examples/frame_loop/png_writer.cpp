// examples/frame_loop/png_writer.cpp — PNG files through stb_image_write.
#include "png_writer.hpp"

#include <stb_image_write.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <string>

namespace frame_loop {

void write_png(const std::filesystem::path& path, std::uint32_t width, std::uint32_t height,
               std::span<const std::byte> rgba) {
  constexpr std::uint64_t channels = 4;
  const std::string size = std::to_string(width) + "x" + std::to_string(height);
  if (width == 0 || height == 0) throw std::invalid_argument("a PNG image cannot be " + size);
  if ((channels * width + 1) * height > INT_MAX)
    throw std::invalid_argument("a " + size + " image is too large for stb_image_write");
  if (rgba.size() != channels * width * height)
    throw std::invalid_argument("a " + size + " RGBA8 image holds " + std::to_string(channels * width * height) +
                                " bytes, not " + std::to_string(rgba.size()));
  // stb reports failure as 0 and nothing else; when it is fopen that failed,
  // errno says why.
  errno = 0;
  const int stride = static_cast<int>(channels * width);
  if (stbi_write_png(path.c_str(), static_cast<int>(width), static_cast<int>(height), static_cast<int>(channels),
                     rgba.data(), stride) == 0)
    throw std::runtime_error("cannot write '" + path.string() + "'" +
                             (errno == 0 ? std::string() : std::string(": ") + std::strerror(errno)));
}

}  // namespace frame_loop
