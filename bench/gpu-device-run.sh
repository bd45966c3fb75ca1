#!/usr/bin/env bash
# The run a session lent the GPU machine makes (issue 42), in one call: the GPU check, the GPU bench (resnet50 with
# 1, 2 and 4 GPU instances against in-process ONNX Runtime, batching, FP16) and the stand-in bench on that machine's
# CPU, each bounded in time, one log per step under $OUT (5 files: the device run brings back at most 8; the benches'
# tables are in their logs, their JSON and charts stay there). Prepare it here with
#   bash bench/gpu-device-prepare.sh
# then run it there (the device tool, carrying .device) with
#   source .device/setup.sh && bash bench/gpu-device-run.sh
# A step that fails or runs out of time is logged and the next one runs; the exit status is the first failure's. The
# limits add up to 560 s, inside the device run's 600 s per call.
set -uo pipefail
# dist travels packed inside .device (gpu-device-prepare.sh): a fresh device machine has none.
[ -d dist ] || tar -xJf .device/dist.tar.xz
out=${OUT:-bench/results/gpu-device}
mkdir -p "$out"
status=0
step() {
  local name=$1 limit=$2
  shift 2
  local started=$SECONDS
  echo "== $name: $* (at most ${limit} s)" | tee -a "$out/summary.txt"
  timeout --kill-after=10 "$limit" "$@" > "$out/$name.log" 2>&1
  local code=$?
  echo "== $name: exit $code after $((SECONDS - started)) s" | tee -a "$out/summary.txt"
  [ "$code" -ne 0 ] && [ "$status" -eq 0 ] && status=$code
  return 0
}
{ date -u; nproc; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1; node --version; cat .device/commit 2>/dev/null || git log -1 --format='%H %s' 2>/dev/null; } > "$out/machine.txt"
# ../shared/data does not travel to the GPU machine; gpu-device-prepare.sh copies what test:gpu reads into .device.
shared_data=../shared/data
[ -d .device/shared-data ] && shared_data=.device/shared-data
step gpu-check 150 node dist/bench/gpu-check.js --shared-data "$shared_data"
step gpu-bench 320 node dist/bench/run-bench.js --gpu --models "" --load-processes 4 --rounds 3 --window-ms 3000 --warmup-ms 1000 --out "${TMPDIR:-/tmp}/gpu-bench"
step gpu-standin 90 node dist/bench/run-bench.js --models gpu-standin --load-processes 4 --rounds 3 --window-ms 2000 --warmup-ms 500 --out "${TMPDIR:-/tmp}/gpu-standin"
exit "$status"
