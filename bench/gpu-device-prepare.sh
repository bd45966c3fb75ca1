#!/usr/bin/env bash
# Prepares, on this machine, what bench/gpu-device-run.sh needs on the GPU machine (issue 42), so that the one run
# there cannot fail for a missing piece:
# - dist/, built;
# - .device/ from ../shared/tools/device-bundle.sh, packing the project's Node 22 (the `node` devDependency, first on
#   PATH here), not this machine's own node: the server is supported and measured on 22;
# - .device/shared-data/: the three files of ../shared/data that test:gpu reads (SqueezeNet 1.1 FP16, its labels,
#   mug.jpg). A device run gets a copy of the working tree, and ../shared beside it does not travel.
# - a smaller bundle: a device run takes 64 MiB in all, tracked files included, and the bundle as packed (Node 22, dist)
#   is over that. So dist travels as .device/dist.tar.xz (gpu-device-run.sh unpacks it), node is packed with xz -9e,
#   and node_modules without type declarations, source maps, docs and the chart font's other faces (charts set their
#   text in DejaVu Sans alone).
# Then send `.device` (the device tool's carry) and run `source .device/setup.sh && bash bench/gpu-device-run.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
shared_data=${1:-../shared/data}
npm run build
PATH="$PWD/node_modules/.bin:$PATH" bash ../shared/tools/device-bundle.sh
cd .device
version=$(cat node.version)
if [ "$(cat node.xz9e 2>/dev/null)" != "$version" ]; then
  xz -dc node.xz | xz -T2 -9e > node.xz.new && mv node.xz.new node.xz && echo "$version" > node.xz9e
fi
if [ "$(cat deps.pruned 2>/dev/null)" != "$(cat deps.hash)" ]; then
  tmp=$(mktemp -d)
  tar -C "$tmp" -xJf deps.tar.xz
  find "$tmp/node_modules" -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' \) -delete
  rm -rf "$tmp/node_modules/@types"
  find "$tmp/node_modules/dejavu-fonts-ttf/ttf" -type f ! -name 'DejaVuSans.ttf' ! -name 'DejaVuSans-Bold.ttf' -delete
  tar -C "$tmp" -cf - node_modules | xz -T2 -9e > deps.tar.xz
  cp deps.hash deps.pruned
  rm -rf "$tmp"
fi
tar -C .. -cf - dist | xz -T2 -9e > dist.tar.xz
cd ..
# The device gets no .git: the figures name the commit they were measured at from here.
git log -1 --format='%H %s' > .device/commit
[ -z "$(git status --porcelain --untracked-files=no)" ] || echo "(with uncommitted changes)" >> .device/commit
for file in models/squeezenet1.1_fp16/SqueezeNet_fp16.onnx labels/densenet_labels.txt images/mug.jpg; do
  install -D -m 644 "$shared_data/$file" ".device/shared-data/$file"
done
tracked=$( (git ls-files -co --exclude-standard -z | du -cb --files0-from=- 2>/dev/null || true) | tail -1 | cut -f1)
bundle=$(du -sb .device | cut -f1)
echo "device bundle: node $(cat .device/node.version); .device $((bundle / 1048576)) MiB + the working tree $((tracked / 1048576)) MiB = $(((bundle + tracked) / 1048576)) MiB of the 64 a device run takes"
[ $((bundle + tracked)) -le $((64 * 1048576)) ] || { echo "over 64 MiB: a device run would refuse it" >&2; exit 1; }
