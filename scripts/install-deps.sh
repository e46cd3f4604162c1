#!/bin/sh
# Installs what ferrum needs to build and test on Debian 12 (as root).
# Boost 1.81 explicitly: Debian's default libboost-dev is 1.74, too old for
# boost::system::result and current Asio.
set -eu
export DEBIAN_FRONTEND=noninteractive
packages="g++-12 lld clang-14 libclang-rt-14-dev clang-format-14 clang-tidy-14 cmake ninja-build pkg-config python3
  libboost1.81-dev catch2 libssl-dev nlohmann-json3-dev libsimdjson-dev rapidjson-dev libcli11-dev libstb-dev
  libvulkan-dev mesa-vulkan-drivers vulkan-tools glslc spirv-tools vulkan-validationlayers
  xvfb x11-apps libglfw3-dev imagemagick libimgui-dev
  libvkfft-dev libfftw3-dev glslang-dev libgraphviz-dev"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  apt-get update -qq
  # shellcheck disable=SC2086 # word splitting of the package list is intended
  apt-get install -y -qq --no-install-recommends $missing
fi
