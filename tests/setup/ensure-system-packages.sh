#!/usr/bin/env bash
# Runs before `npm test` (package.json "pretest"): installs the Debian packages the suites start for real when they
# are missing, so the README's test command passes on a fresh machine that has only Node, npm and apt.
#   prometheus           /usr/bin/prometheus and promtool: metrics e2e, dashboard queries, alert rule tests
#   python3-grpcio       the independent gRPC client (Debian's /usr/bin/python3)
#   python3-grpc-tools   stubs for that client, generated from our protos
#   openssl              certificates the TLS tests generate
# and, without installing anything system-wide, a software WebGPU adapter (Mesa's lavapipe) unpacked into
# .webgpu-on-cpu/ for the KIND_GPU tests (tests/e2e/software-gpu.test.ts): see webgpu-on-cpu.sh.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bash "$here/webgpu-on-cpu.sh" "$here/../../.webgpu-on-cpu" >/dev/null

need=()
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import grpc, grpc_tools' >/dev/null 2>&1 || need+=(python3-grpcio python3-grpc-tools)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
[ ${#need[@]} -eq 0 ] && exit 0

# One package may be listed twice (prometheus provides both binaries).
mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "npm test: missing Debian packages (${need[*]}); run as root or with passwordless sudo, or install them: apt-get install ${need[*]}" >&2
    exit 1
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "npm test: missing packages (${need[*]}) and no apt-get to install them; install them with your package manager" >&2
  exit 1
fi
echo "npm test: installing Debian packages: ${need[*]}" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
