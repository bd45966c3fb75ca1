import { type ClientHttp2Session, type ClientHttp2Stream, connect, constants, type IncomingHttpHeaders } from "node:http2";
import { GrpcMessageAssembler, lengthPrefixed, PREFIX_BYTES } from "../server/index";
import type { RequestSender } from "../tools/perf/index";
import { inferenceMethod, type RawInput, serializedInferRequest, StreamPool } from "./grpc-stream-sender";

const SERVICE = "/inference.GRPCInferenceService/";

function requestHeaders(method: string): Record<string, string> {
  return {
    [constants.HTTP2_HEADER_METHOD]: "POST", [constants.HTTP2_HEADER_PATH]: `${SERVICE}${method}`,
    [constants.HTTP2_HEADER_CONTENT_TYPE]: "application/grpc", te: "trailers",
  };
}

/** The call's status from headers or trailers that carry one: its code and its message, still percent-encoded. */
function grpcStatus(fields: IncomingHttpHeaders): [string, string] | undefined {
  return fields["grpc-status"] === undefined ? undefined : [String(fields["grpc-status"]), String(fields["grpc-message"] ?? "")];
}

/** One open ModelStreamInfer stream: a request written, its one response read. */
class OpenStream {
  readonly #assembler = new GrpcMessageAssembler(-1);
  #waiting: { resolve(message: Buffer): void; reject(error: Error): void } | undefined;

  constructor(readonly stream: ClientHttp2Stream, drop: () => void) {
    const fail = (error: Error): void => {
      drop();
      this.#waiting?.reject(error);
      this.#waiting = undefined;
    };
    stream.on("data", (chunk: Buffer) => {
      for (const message of this.#assembler.write(chunk)) {
        const waiting = this.#waiting;
        this.#waiting = undefined;
        waiting?.resolve(message);
      }
    });
    stream.once("error", fail);
    stream.once("close", () => fail(new Error("the ModelStreamInfer stream closed")));
  }

  /** Writes one framed request; resolves with the next response message, prefix included. */
  exchange(message: Buffer): Promise<Buffer> {
    const response = new Promise<Buffer>((resolve, reject) => (this.#waiting = { resolve, reject }));
    this.stream.write(message);
    return response;
  }
}

/**
 * A gRPC load generator as lean as undici is for HTTP: ModelInfer and ModelStreamInfer on one `node:http2` session,
 * each request framed once and resent as the same bytes, each response reassembled as its chunks arrive and decoded
 * as the repository's client decodes it (protobufjs). grpc-js's client spends 2-3x undici's CPU per request (it
 * copies a prepared message behind its prefix on every call and keeps and joins the response's chunks), on the same
 * two cores as the server, so with it the gRPC/HTTP ratios measure the clients as much as the server; perf_analyzer
 * is C++ for the same reason. No TLS, deadlines or metadata: only what the bench's requests need.
 */
export class Http2GrpcSender {
  readonly #session: ClientHttp2Session;
  readonly #unaryMethod = inferenceMethod("ModelInfer");
  readonly #streamMethod = inferenceMethod("ModelStreamInfer");
  readonly #streams = new StreamPool((drop) => new OpenStream(this.#session.request(requestHeaders("ModelStreamInfer")), drop));

  constructor(address: string, windowBytes = 8 * 1024 * 1024) {
    this.#session = connect(`http://${address}`, { settings: { initialWindowSize: windowBytes } });
    this.#session.on("connect", () => this.#session.setLocalWindowSize(windowBytes));
    this.#session.on("error", () => undefined);
  }

  /** Unary ModelInfer calls, one HTTP/2 stream each; resolves once the trailers say OK. */
  unary(model: string, inputs: readonly RawInput[]): RequestSender {
    const message = lengthPrefixed(serializedInferRequest(this.#unaryMethod, model, inputs), false);
    const headers = requestHeaders("ModelInfer");
    return () => new Promise((resolve, reject) => {
      const stream = this.#session.request(headers);
      const assembler = new GrpcMessageAssembler(-1);
      // The response leaves these closures once decoded: node:http2 keeps a finished stream, and so its listeners,
      // long enough to be promoted, and a 600 KB response kept with it was freed only by a mark-compact (one every
      // ~30 calls, 0.7 ms of GC per call, half the client's CPU; measured with --trace-gc on identity_fp32).
      let response: Buffer | undefined;
      let status: [string, string] | undefined;
      // A call that fails before any message answers with its status in the headers ("trailers-only").
      stream.on("response", (head) => (status = grpcStatus(head) ?? status));
      stream.on("data", (chunk: Buffer) => (response = assembler.write(chunk)[0] ?? response));
      stream.on("trailers", (trailers) => (status = grpcStatus(trailers) ?? status));
      stream.once("error", reject);
      stream.once("close", () => {
        if (status?.[0] !== "0" || response === undefined) {
          reject(new Error(`ModelInfer failed: grpc-status ${status?.[0] ?? "none"} ${decodeURIComponent(status?.[1] ?? "")}`));
          return;
        }
        const receivedAt = process.hrtime.bigint();
        this.#unaryMethod.responseDeserialize(response.subarray(PREFIX_BYTES));
        response = undefined;
        resolve({ sendNs: 0, receiveNs: Number(process.hrtime.bigint() - receivedAt) });
      });
      stream.end(message);
    });
  }

  /** ModelStreamInfer: each request on an idle open stream, or a new one; resolves with its one response decoded. */
  streaming(model: string, inputs: readonly RawInput[]): RequestSender {
    const message = lengthPrefixed(serializedInferRequest(this.#streamMethod, model, inputs), false);
    return this.#streams.sender(this.#streamMethod, async (open) => (await open.exchange(message)).subarray(PREFIX_BYTES));
  }

  close(): void {
    for (const open of this.#streams.open) open.stream.end();
    this.#session.close();
  }
}
