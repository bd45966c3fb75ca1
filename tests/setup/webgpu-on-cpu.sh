#!/usr/bin/env bash
# WebGPU on a machine without a GPU: Mesa's lavapipe (a Vulkan driver that runs on the CPU) from Debian's
# bookworm-backports suite (Mesa 25; bookworm's own Mesa 22 lacks a feature Dawn needs), unpacked into DIR
# without installing anything system-wide. ONNX Runtime's bundled WebGPU execution provider then finds one
# adapter ("llvmpipe") and runs real WebGPU shaders on the CPU: slow (resnet50 batch 1 about 16 s with shader
# compilation), but the same provider code, threads and buffers as on an NVIDIA GPU.
#
#   tests/setup/webgpu-on-cpu.sh DIR            # once: downloads about 50 MB of .deb files, unpacks them
#   source DIR/env.sh                           # sets LD_LIBRARY_PATH and VK_DRIVER_FILES for this shell
#
# `npm test` runs this (ensure-system-packages.sh) into .webgpu-on-cpu/ (git-ignored), as root or not: nothing is
# installed outside DIR. The server uses the adapter only with --allow-software-gpu.
#
# Seen: two worker threads that each create a WebGPU session and run it at once crash the process (SIGSEGV),
# here exactly as on the H200; one worker is fine.
set -euo pipefail
dir=$(mkdir -p "${1:?usage: webgpu-on-cpu.sh DIR}" && cd "$1" && pwd)
[ -f "$dir/env.sh" ] && { echo "already unpacked in $dir: source $dir/env.sh"; exit 0; }
mkdir -p "$dir/lists/partial" "$dir/debs" "$dir/root"
# The backports suite from the same Debian mirror this machine already uses.
uri=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
[ -n "$uri" ] || uri=$(sed -n 's/^deb \(http[^ ]*\) bookworm main.*/\1/p' /etc/apt/sources.list | head -1)
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri bookworm-backports main" > "$dir/backports.list"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri bookworm main" >> "$dir/backports.list"
mkdir -p "$dir/cache/archives/partial"
o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$dir/lists" "-oDir::Cache=$dir/cache"
   "-oDir::Etc::SourceList=$dir/backports.list" -oDir::Etc::SourceParts=/nonexistent)
apt-get "${o[@]}" update -qq
(cd "$dir/debs" && apt-get "${o[@]}" download -qq mesa-vulkan-drivers/bookworm-backports libdrm2/bookworm-backports \
  libdrm-amdgpu1/bookworm-backports libdrm-common/bookworm-backports libvulkan1 libllvm15 libz3-4 libedit2 \
  libxcb-dri3-0 libxcb-present0 libxcb-sync1 libxcb-xfixes0 libxcb-randr0 libxcb-shm0 libxshmfence1 \
  libwayland-client0 libx11-xcb1 libx11-6 libxcb1 libxau6 libxdmcp6 libbsd0 libmd0 libsensors5 libpciaccess0 \
  libelf1 libzstd1 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
for deb in "$dir"/debs/*.deb; do dpkg -x "$deb" "$dir/root"; done
# The unpacked tree is all that is used: the downloads and apt's lists go (about 60 MB).
rm -rf "$dir/debs" "$dir/lists" "$dir/cache"
icd="$dir/root/usr/share/vulkan/icd.d/lvp_icd.json"
sed -i "s#\"library_path\": \"[^\"]*\"#\"library_path\": \"$dir/root/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so\"#" "$icd"
cat > "$dir/env.sh" <<ENV
export LD_LIBRARY_PATH=$dir/root/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export VK_DRIVER_FILES=$icd
ENV
echo "unpacked in $dir: source $dir/env.sh"
