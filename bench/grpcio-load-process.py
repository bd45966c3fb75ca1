"""A bench load process on gRPC's C core (Debian's python3-grpcio), as Triton's Python and C++ clients and
perf_analyzer send: its HTTP/2 runs in native threads and sends DATA frames as large as the server allows, which
Node's HTTP/2 client never does (16 KiB frames whatever the server allows).

Usage: /usr/bin/python3 grpcio-load-process.py HOST:PORT REQUEST_FILE
REQUEST_FILE holds one serialized ModelInferRequest, sent as it is. Speaks the bench's load-process messages
(bench/load-process-protocol.ts) as JSON lines: {"type": "ready"} once the first call was answered, then for each
{"concurrency", "warmupMs", "durationMs"} line on stdin one {"type": "measured", ...} line on stdout, or
{"type": "failed", "message"} and an exit. Exits when stdin closes.
"""
import json
import sys
import threading
import time

import grpc


def described(error):
    """A failed call as its status and message (grpcio's own text is a multi-line debug dump)."""
    if isinstance(error, grpc.RpcError):
        return f"{error.code().name}: {error.details()}"
    return str(error)


def percentile(sorted_values, p):
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p / 100))]


def measure(infer, request, window):
    """Closed loop at `concurrency` calls in flight: warm-up, then a window of `durationMs` that is reported."""
    # Reentrant: grpcio runs a done callback at once, in the adding thread, when the call has already ended.
    lock = threading.RLock()
    done = threading.Event()
    state = {"sent": 0, "in_flight": 0, "stopping": False, "error": None}
    completions, latencies = [], []
    started = time.monotonic()
    opens = started + window["warmupMs"] / 1000
    closes = opens + window["durationMs"] / 1000

    def send():
        state["sent"] += 1
        state["in_flight"] += 1
        call_started = time.monotonic()
        infer.future(request, timeout=60).add_done_callback(lambda future: answered(future, call_started))

    def answered(future, call_started):
        now = time.monotonic()
        with lock:
            state["in_flight"] -= 1
            if future.exception() is not None and state["error"] is None:
                state["error"] = described(future.exception())
            if opens <= now <= closes:
                completions.append(now)
                latencies.append(now - call_started)
            if now > closes or state["error"] is not None:
                state["stopping"] = True
            if not state["stopping"]:
                send()
            elif state["in_flight"] == 0:
                done.set()

    cpu_before, wall_before = time.process_time(), time.monotonic()
    with lock:
        for _ in range(window["concurrency"]):
            send()
    if not done.wait(window["warmupMs"] / 1000 + window["durationMs"] / 1000 * 4 + 60):
        raise RuntimeError("the measured window did not close in time")
    cpu_share = (time.process_time() - cpu_before) / (time.monotonic() - wall_before)
    if state["error"] is not None:
        raise RuntimeError(f"a call failed: {state['error']}")
    latencies.sort()
    ms = lambda p: percentile(latencies, p) * 1000
    return {
        "type": "measured",
        "measured": {"throughput": len(completions) / (window["durationMs"] / 1000), "p50Ms": ms(50), "p90Ms": ms(90), "p99Ms": ms(99)},
        "sent": state["sent"], "cpuShare": cpu_share,
    }


def say(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    address, request_file = sys.argv[1], sys.argv[2]
    with open(request_file, "rb") as f:
        request = f.read()
    channel = grpc.insecure_channel(address, options=[("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)])
    # No serializers: the request goes as the bytes it is, the response stays bytes.
    infer = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer")
    try:
        infer(request, timeout=60)
        say({"type": "ready"})
        for line in sys.stdin:
            say(measure(infer, request, json.loads(line)))
    except Exception as error:  # reported to the bench, which names it
        say({"type": "failed", "message": described(error)})
        sys.exit(1)
    finally:
        channel.close()


if __name__ == "__main__":
    main()
