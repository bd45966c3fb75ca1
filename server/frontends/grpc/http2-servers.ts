import type { Http2SecureServer, Http2Server, IncomingHttpHeaders, ServerHttp2Session, ServerHttp2Stream } from "node:http2";
import type { Socket } from "node:net";
import type { Server } from "@grpc/grpc-js";
import { watchConnectionWrites } from "./connection-write-timeout";
import { type StreamTimeouts, watchStreamTimeouts } from "./stream-timeouts";
import { compressionAlgorithm, compressResponses, type GrpcCompressionLevel } from "./response-compression";

/** What the gRPC endpoint sets on the HTTP/2 servers grpc-js binds, which grpc-js's own options do not reach. */
export interface Http2ServerSettings {
  /** HTTP/2 receive window granted per stream and per connection. */
  readonly windowBytes: number;
  /** SETTINGS_MAX_FRAME_SIZE: the largest frame clients may send. */
  readonly maxFrameBytes: number;
  /** Most connections one listening address holds at once; more are closed as they are accepted. 0 = no limit. */
  readonly maxConnections: number;
  /** Called for each connection closed on accept by {@link maxConnections}. */
  readonly onConnectionRefused: () => void;
  readonly streams: StreamTimeouts;
  /** Triton's --grpc-infer-response-compression-level: for ModelInfer and ModelStreamInfer responses. */
  readonly inferResponseCompression: GrpcCompressionLevel;
}

const INFER_PATHS: ReadonlySet<string> = new Set(["/inference.GRPCInferenceService/ModelInfer", "/inference.GRPCInferenceService/ModelStreamInfer"]);

function peerOf(socket: Pick<Socket, "remoteAddress" | "remotePort">): string {
  return `${socket.remoteAddress}:${socket.remotePort}`;
}

/**
 * Configures the HTTP/2 servers of a bound grpc-js server: receive windows and frame size, the connection limit,
 * the timeouts of every call's stream, the write timeout of whole connections, and the compression of infer
 * responses.
 *
 * Windows: grpc-js leaves every server session at Node's 64 KiB stream and connection windows (its
 * `grpc-node.flow_control_window` option is client-only; grpc-node PR #3058 would add it to servers), so a client
 * sending a 600 KB image tensor waits for about ten WINDOW_UPDATE round trips, and concurrent calls on one
 * connection share 64 KiB in flight: measured on loopback, gRPC then served 0.3-0.5 of the HTTP throughput for
 * 600 KB tensors with both processes mostly idle.
 *
 * grpc-js has no public hook for its HTTP/2 servers, so this reads its private `http2Servers` map, the one place
 * the endpoint reaches into grpc-js. Returns false (and changes nothing) when a grpc-js version no longer has it,
 * which the gRPC tests then catch. Call after `bindAsync` resolved: that is when the HTTP/2 servers exist, and
 * grpc-js's own listeners are in place, so the ones added here run after them.
 */
export function configureHttp2Servers(server: Server, settings: Http2ServerSettings): boolean {
  const servers: unknown = Reflect.get(server, "http2Servers");
  if (!(servers instanceof Map)) return false;
  const { writeTimeoutMs } = settings.streams;
  const watchesWrites = writeTimeoutMs > 0;
  for (const http2Server of servers.keys() as Iterable<Http2Server | Http2SecureServer>) {
    // The TCP socket under each session (a TLS one's included), which the session does not hand out; only the
    // write timeout needs it. Prepended: a plaintext server makes the session (and emits 'session') in its own
    // 'connection' listener.
    const tcpSockets = new Map<string, Socket>();
    if (watchesWrites) {
      http2Server.prependListener("connection", (socket: Socket) => {
        const peer = peerOf(socket);
        tcpSockets.set(peer, socket);
        socket.once("close", () => tcpSockets.delete(peer));
      });
    }
    http2Server.on("session", (session: ServerHttp2Session) => {
      // The SETTINGS frame sets the window of every stream the client opens; the connection window is separate.
      session.settings({ initialWindowSize: settings.windowBytes, maxFrameSize: settings.maxFrameBytes });
      session.setLocalWindowSize(settings.windowBytes);
      if (!watchesWrites) return;
      const tcpSocket = tcpSockets.get(peerOf(session.socket));
      if (tcpSocket !== undefined) watchConnectionWrites(session, tcpSocket, writeTimeoutMs, settings.streams.logger);
    });
    http2Server.on("stream", (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
      const path = headers[":path"] ?? "";
      watchStreamTimeouts(stream, path, settings.streams);
      const acceptEncoding = headers["grpc-accept-encoding"];
      const algorithm = INFER_PATHS.has(path) ? compressionAlgorithm(settings.inferResponseCompression, Array.isArray(acceptEncoding) ? acceptEncoding.join(",") : acceptEncoding) : undefined;
      if (algorithm !== undefined) compressResponses(stream, algorithm);
    });
    // Node refuses at accept, before TLS or HTTP/2 cost anything. A grpc-js server binds one HTTP/2 server per
    // address that --grpc-address resolves to, hence "per listening address".
    http2Server.maxConnections = settings.maxConnections;
    http2Server.on("drop", settings.onConnectionRefused);
  }
  return true;
}
