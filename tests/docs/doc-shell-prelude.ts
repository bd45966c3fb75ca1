/** The ports one page's session serves on instead of the documented 8000, 8001 and 8002. */
export interface SessionPorts {
  readonly http: number;
  readonly grpc: number;
  readonly metrics: number;
}

const PRELUDE = `
set -o pipefail
trap 'echo "doc-test: exit status $? from: $BASH_COMMAND" >&2; __doc_failed=1' ERR
__doc_server_pid=
__doc_servers=0
__doc_ports() {
  local arg
  __doc_args=()
  for arg in "$@"; do
    arg="\${arg//:8000/:@HTTP@}"; arg="\${arg//:8001/:@GRPC@}"; arg="\${arg//:8002/:@METRICS@}"
    __doc_args+=("$arg")
  done
}
curl() { __doc_ports "$@"; command curl "\${__doc_args[@]}"; }
__doc_server_stop() {
  if [ -n "$__doc_server_pid" ]; then kill "$__doc_server_pid" 2>/dev/null; wait "$__doc_server_pid" 2>/dev/null; __doc_server_pid=; fi
  return 0
}
__doc_server_start() {
  __doc_server_stop
  local scheme=http arg log="server-$((++__doc_servers)).log"
  for arg in "$@"; do [ "$arg" = --http-use-ssl ] && scheme=https; done
  node @SERVER_BIN@ "$@" --http-port @HTTP@ --grpc-port @GRPC@ --metrics-port @METRICS@ \\
    --http-address 127.0.0.1 --grpc-address 127.0.0.1 --metrics-address 127.0.0.1 >"$log" 2>&1 &
  __doc_server_pid=$!
  for _ in $(seq 1 900); do
    if ! kill -0 "$__doc_server_pid" 2>/dev/null; then echo "doc-test: the server exited:" >&2; cat "$log" >&2; __doc_server_pid=; return 1; fi
    [ "$(command curl -sk -o /dev/null -w '%{http_code}' "$scheme://localhost:@HTTP@/v2/health/ready")" = 200 ] && return 0
    sleep 0.1
  done
  echo "doc-test: the server was not ready within 90 s:" >&2; cat "$log" >&2; return 1
}
npx() {
  case "$1" in
    inference-server) shift; __doc_server_start "$@" ;;
    inference-perf) __doc_ports "$@"; command npx "\${__doc_args[@]}" ;;
    *) command npx "$@" ;;
  esac
}
`;

/**
 * Bash run before a page's first block. It keeps the documented commands unchanged and redirects only what a
 * test must control: \`npx inference-server ...\` starts the server in the background on the session's loopback
 * ports (later flags win, so the documented ones stay) and returns once \`/v2/health/ready\` answers 200, after
 * stopping a server the page started before; \`curl\` and \`npx inference-perf\` see the documented ports
 * 8000-8002 replaced by the session's. A failing command marks its block failed (ERR trap).
 */
export function docShellPrelude(ports: SessionPorts, serverBin: string): string {
  return PRELUDE.replaceAll("@HTTP@", String(ports.http))
    .replaceAll("@GRPC@", String(ports.grpc))
    .replaceAll("@METRICS@", String(ports.metrics))
    .replaceAll("@SERVER_BIN@", JSON.stringify(serverBin));
}
