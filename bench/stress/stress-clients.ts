import { type Client as GrpcClient, credentials, makeGenericClientConstructor, Metadata, status } from "@grpc/grpc-js";
import type { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import { loadGrpcServiceDefinitions } from "../../server/index";

/**
 * How one request ended, from the client's side. `rejected` is the server declining work it could not take (503 /
 * UNAVAILABLE); `client-error` a 4xx or a gRPC status naming the request's fault; `server-error` 500 or INTERNAL /
 * UNKNOWN / DATA_LOSS; `refused` no connection (nothing was accepted); `reset` the connection or stream broke after
 * the request went out; `hang` no answer within the timeout.
 */
export type OutcomeKind = "ok" | "rejected" | "client-error" | "server-error" | "refused" | "reset" | "hang";

export interface Outcome {
  readonly kind: OutcomeKind;
  /** HTTP status, gRPC status name, or the socket error code. */
  readonly status: string;
  readonly latencyMs: number;
  /** The answer's error message (or body start), for the report's examples. */
  readonly detail: string;
}

export interface RestRequest {
  readonly method: Dispatcher.HttpMethod;
  readonly path: string;
  readonly headers?: Record<string, string>;
  /** A stream is sent chunked (no Content-Length); it can be sent once. */
  readonly body?: Buffer | string | Readable;
}

const REFUSED_CODES = new Set(["ECONNREFUSED"]);
const nowMs = (): number => performance.now();

function restKind(statusCode: number): OutcomeKind {
  if (statusCode < 400) return "ok";
  if (statusCode === 503) return "rejected";
  if (statusCode >= 500 && statusCode !== 501) return "server-error";
  return "client-error";
}

/** One REST exchange on `dispatcher` (an undici Client, Pool or Agent), classified; never rejects. */
export async function restCall(dispatcher: Dispatcher, origin: string, request: RestRequest, timeoutMs: number): Promise<Outcome> {
  const start = nowMs();
  try {
    const response = await dispatcher.request({
      origin, method: request.method, path: request.path, headers: request.headers, body: request.body,
      headersTimeout: timeoutMs, bodyTimeout: timeoutMs,
    });
    const text = await response.body.text();
    return { kind: restKind(response.statusCode), status: String(response.statusCode), latencyMs: nowMs() - start, detail: text.slice(0, 300) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).name;
    const kind: OutcomeKind = code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT" ? "hang"
      : REFUSED_CODES.has(code) ? "refused" : "reset";
    return { kind, status: code, latencyMs: nowMs() - start, detail: (error as Error).message.slice(0, 300) };
  }
}

/** Statuses that say the request was at fault (or asked for something absent), as opposed to the server. */
const CLIENT_FAULT_CODES = new Set<status>([
  status.INVALID_ARGUMENT, status.NOT_FOUND, status.ALREADY_EXISTS, status.FAILED_PRECONDITION, status.OUT_OF_RANGE,
  status.UNIMPLEMENTED, status.RESOURCE_EXHAUSTED, status.PERMISSION_DENIED, status.UNAUTHENTICATED, status.CANCELLED,
]);

/**
 * gRPC answers a message it cannot decode with INTERNAL in every implementation (grpc-js: "Error deserializing
 * request", as Java's and Python's): the sender's fault, not the server's, so it is not counted as a server error.
 */
const UNDECODABLE_DETAILS = "Error deserializing request";

function grpcKind(code: status, details: string): OutcomeKind {
  if (code === status.OK) return "ok";
  if (code === status.INTERNAL && details.startsWith(UNDECODABLE_DETAILS)) return "client-error";
  if (code === status.UNAVAILABLE) return "rejected";
  if (code === status.DEADLINE_EXCEEDED) return "hang";
  return CLIENT_FAULT_CODES.has(code) ? "client-error" : "server-error";
}

type GrpcMessage = Record<string, unknown>;
const MODEL_INFER_PATH = "/inference.GRPCInferenceService/ModelInfer";

/**
 * A gRPC client for the campaign: ModelInfer with raw bytes sent as the message, a valid request encoded once by
 * {@link encode} (our own protos) or undecodable protobuf, which reaches the server only this way.
 */
export class GrpcStressClient {
  readonly #client: GrpcClient;
  readonly #serialize: (message: GrpcMessage) => Buffer;
  readonly #deserialize: (bytes: Buffer) => GrpcMessage;

  constructor(address: string) {
    const { inference } = loadGrpcServiceDefinitions();
    const method = inference["ModelInfer"]!;
    this.#serialize = method.requestSerialize as (message: GrpcMessage) => Buffer;
    this.#deserialize = method.responseDeserialize as (bytes: Buffer) => GrpcMessage;
    const Client = makeGenericClientConstructor({}, "GRPCInferenceService");
    this.#client = new Client(address, credentials.createInsecure(), { "grpc.max_receive_message_length": -1, "grpc.max_send_message_length": -1 });
  }

  /** The wire bytes of a ModelInferRequest; throws when the object does not fit the proto. */
  encode(message: GrpcMessage): Buffer {
    return this.#serialize(message);
  }

  modelInferBytes(bytes: Buffer, timeoutMs: number): Promise<Outcome> {
    const start = nowMs();
    return new Promise((resolve) => {
      this.#client.makeUnaryRequest(
        MODEL_INFER_PATH, (b: Buffer) => b, (b: Buffer) => b, bytes, new Metadata(), { deadline: Date.now() + timeoutMs },
        (error, response) => {
          const latencyMs = nowMs() - start;
          if (error) {
            const kind = grpcKind(error.code, error.details);
            const name = status[error.code] ?? String(error.code);
            resolve({ kind, status: kind === "client-error" && error.code === status.INTERNAL ? `${name} (undecodable)` : name, latencyMs, detail: error.details.slice(0, 300) });
          } else {
            this.#deserialize(response!);
            resolve({ kind: "ok", status: "OK", latencyMs, detail: "" });
          }
        },
      );
    });
  }

  close(): void {
    this.#client.close();
  }
}
