import type { Http2Server, Http2Session } from "node:http2";
import type { Server } from "@grpc/grpc-js";

/**
 * Widens the HTTP/2 receive windows of a bound grpc-js server. grpc-js leaves every server session at Node's
 * 64 KiB stream and connection windows (its `grpc-node.flow_control_window` option is client-only; grpc-node
 * PR #3058 would add it to servers), so a client sending a 600 KB image tensor waits for about ten
 * WINDOW_UPDATE round trips, and concurrent calls on one connection share 64 KiB in flight: measured on
 * loopback, gRPC then served 0.3-0.5 of the HTTP throughput for 600 KB tensors with both processes mostly idle.
 * grpc-js has no public hook for its HTTP/2 servers, so this reads its private `http2Servers` map; returns
 * false (and changes nothing) when a grpc-js version no longer has it, which the gRPC tests then catch.
 * Call after `bindAsync` resolved: that is when the HTTP/2 servers exist.
 */
export function widenReceiveWindows(server: Server, windowBytes: number): boolean {
  const servers: unknown = Reflect.get(server, "http2Servers");
  if (!(servers instanceof Map)) return false;
  for (const http2Server of servers.keys() as Iterable<Http2Server>) {
    http2Server.on("session", (session: Http2Session) => {
      // The SETTINGS frame sets the window of every stream the client opens; the connection window is separate.
      session.settings({ initialWindowSize: windowBytes });
      session.setLocalWindowSize(windowBytes);
    });
  }
  return true;
}
