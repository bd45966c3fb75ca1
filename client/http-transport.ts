import { promisify } from "node:util";
import zlib from "node:zlib";
import { Pool } from "undici";
import { type ClientTls, nodeTlsOptions } from "./client-tls";
import type { ClientTransport } from "./client-transport";
import { errorFromHttpStatus } from "./error-from-http-status";
import { decodeHttpInfer, encodeHttpInfer, INFERENCE_HEADER_CONTENT_LENGTH } from "./http-infer-codec";
import { InferResult } from "./infer-result";
import type { CallOptions, InferRequest, PreparedInferRequest } from "./infer-types";
import { loadConfigText, type ModelLoadOverrides } from "./model-load-overrides";
import { RequestTimeoutError, ServerUnreachableError } from "./inference-server-error";
import { ResponseQueue } from "./response-queue";
import type { GenerateResponse, GenerateStreamEvent } from "./stream-types";
import type { LogSettings, ModelConfig, ModelMetadata, ModelStatistics, RepositoryIndexEntry, ServerMetadata } from "./kserve-types";

/** Errors of the connection itself: errno codes (ECONNREFUSED, ECONNRESET, ENOTFOUND...) and undici's socket ones. */
const NETWORK_ERROR = /^(E[A-Z]+|UND_ERR_SOCKET|UND_ERR_CONNECT_TIMEOUT)$/;

const compressors = { gzip: promisify(zlib.gzip), deflate: promisify(zlib.deflate) };
const decompressors: Readonly<Record<string, (bytes: Uint8Array) => Promise<Buffer>>> = {
  gzip: promisify(zlib.gunzip), deflate: promisify(zlib.inflate),
};

export interface HttpTransportOptions {
  /** `http://host:port` (or https://), optionally with a path prefix (a server behind a proxy path). */
  readonly url: string;
  /** Most connections kept to the server; unlimited by default (one per concurrent call). */
  readonly maxConnections?: number;
  /** How long an idle keep-alive connection is kept (default 60 s, capped by the server's Keep-Alive hint). */
  readonly keepAliveTimeoutMs?: number;
  /** Compress request bodies this way, and accept compressed responses. */
  readonly compression?: "gzip" | "deflate";
  /** Default per-call timeout; none by default. */
  readonly timeoutMs?: number;
  /** Headers sent with every request (auth, tracing, a restricted API's header). */
  readonly headers?: Readonly<Record<string, string>>;
  /** CA, client certificate and verification settings for an https:// URL. */
  readonly tls?: ClientTls;
}

/** A body encoded once by {@link HttpTransport.prepareInfer}. */
class HttpPreparedInfer implements PreparedInferRequest {
  #encodeCharged = false;

  constructor(
    readonly modelName: string,
    readonly modelVersion: string | undefined,
    readonly path: string,
    readonly body: Buffer,
    readonly headers: Readonly<Record<string, string>>,
    readonly encodeNs: number,
  ) {}

  /** The encode time on the first send, 0 on later ones: summed over all sends it is the real encoding cost. */
  chargeEncodeNs(): number {
    if (this.#encodeCharged) return 0;
    this.#encodeCharged = true;
    return this.encodeNs;
  }
}

interface HttpResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
  readonly headersAtNs: bigint;
}

function headerValue(headers: HttpResponse["headers"], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function modelPath(model: string, version: string | undefined, suffix = ""): string {
  const versionPart = version === undefined || version === "" ? "" : `/versions/${encodeURIComponent(version)}`;
  return `/v2/models/${encodeURIComponent(model)}${versionPart}${suffix}`;
}

/** The parameters of a load request as Triton's REST frontend takes them: `config`, then `file:<path>` in base64. */
function loadParameters(overrides: ModelLoadOverrides): Record<string, string> {
  const parameters: Record<string, string> = {};
  const config = loadConfigText(overrides);
  if (config !== undefined) parameters["config"] = config;
  for (const [file, contents] of Object.entries(overrides.files ?? {})) {
    parameters[`file:${file}`] = Buffer.from(contents.buffer, contents.byteOffset, contents.byteLength).toString("base64");
  }
  return parameters;
}

/**
 * KServe v2 REST over an undici connection pool with keep-alive. Every method is safe to call concurrently;
 * connections are opened on demand up to `maxConnections` and reused. Failures become `InferenceServerError`s:
 * the server's `{"error": ...}` with its status mapped to a subclass, `ServerUnreachableError` when no
 * connection could be made, `RequestTimeoutError` when `timeoutMs` passed.
 */
export class HttpTransport implements ClientTransport {
  readonly protocol = "http";
  readonly target: string;
  readonly #pool: Pool;
  readonly #basePath: string;
  readonly #options: HttpTransportOptions;

  constructor(options: HttpTransportOptions) {
    const url = new URL(options.url);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`an HTTP transport needs an http:// or https:// URL, got '${options.url}'`);
    this.target = url.href.replace(/\/$/, "");
    this.#basePath = url.pathname.replace(/\/$/, "");
    this.#options = options;
    const keepAliveTimeout = options.keepAliveTimeoutMs ?? 60_000;
    this.#pool = new Pool(url.origin, {
      connections: options.maxConnections ?? null,
      keepAliveTimeout,
      keepAliveMaxTimeout: Math.max(keepAliveTimeout, 600_000),
      // Timeouts are the caller's (timeoutMs); a slow model must not be cut off by a transport default.
      headersTimeout: 0,
      bodyTimeout: 0,
      ...(url.protocol === "https:" ? { connect: nodeTlsOptions(options.tls) } : {}),
    });
  }

  async serverLive(options?: CallOptions): Promise<boolean> {
    return this.#health("/v2/health/live", options);
  }

  async serverReady(options?: CallOptions): Promise<boolean> {
    return this.#health("/v2/health/ready", options);
  }

  serverMetadata(options?: CallOptions): Promise<ServerMetadata> {
    return this.#json("GET", "/v2", undefined, options);
  }

  async modelReady(model: string, version: string | undefined, options?: CallOptions): Promise<boolean> {
    // Triton answers 400 for a model that is not ready, and 404 is as much "not ready" to a caller.
    const response = await this.#send("GET", modelPath(model, version, "/ready"), undefined, {}, options);
    if (response.status === 200) return true;
    if (response.status === 400 || response.status === 404) return false;
    throw this.#errorOf(response);
  }

  modelMetadata(model: string, version: string | undefined, options?: CallOptions): Promise<ModelMetadata> {
    return this.#json("GET", modelPath(model, version), undefined, options);
  }

  modelConfig(model: string, version: string | undefined, options?: CallOptions): Promise<ModelConfig> {
    return this.#json("GET", modelPath(model, version, "/config"), undefined, options);
  }

  async modelStatistics(model: string | undefined, version: string | undefined, options?: CallOptions): Promise<ModelStatistics[]> {
    const path = model === undefined ? "/v2/models/stats" : modelPath(model, version, "/stats");
    const body = await this.#json<{ model_stats: ModelStatistics[] }>("GET", path, undefined, options);
    return body.model_stats;
  }

  repositoryIndex(readyOnly: boolean, options?: CallOptions): Promise<RepositoryIndexEntry[]> {
    return this.#json("POST", "/v2/repository/index", JSON.stringify({ ready: readyOnly }), options);
  }

  async loadModel(model: string, overrides: ModelLoadOverrides, options?: CallOptions): Promise<void> {
    const parameters = loadParameters(overrides);
    const body = Object.keys(parameters).length === 0 ? undefined : JSON.stringify({ parameters });
    await this.#call("POST", `/v2/repository/models/${encodeURIComponent(model)}/load`, body, options);
  }

  async unloadModel(model: string, unloadDependents: boolean, options?: CallOptions): Promise<void> {
    const body = unloadDependents ? JSON.stringify({ parameters: { unload_dependents: true } }) : undefined;
    await this.#call("POST", `/v2/repository/models/${encodeURIComponent(model)}/unload`, body, options);
  }

  logSettings(update: Partial<LogSettings> | undefined, options?: CallOptions): Promise<LogSettings> {
    return update === undefined ? this.#json("GET", "/v2/logging", undefined, options) : this.#json("POST", "/v2/logging", JSON.stringify(update), options);
  }

  prepareInfer(request: InferRequest): PreparedInferRequest {
    const start = process.hrtime.bigint();
    const encoded = encodeHttpInfer(request);
    const path = modelPath(request.modelName, request.modelVersion, "/infer");
    const end = process.hrtime.bigint();
    return new HttpPreparedInfer(request.modelName, request.modelVersion, path, encoded.body, encoded.headers, Number(end - start));
  }

  async infer(prepared: PreparedInferRequest, options?: CallOptions): Promise<InferResult> {
    if (!(prepared instanceof HttpPreparedInfer)) throw new TypeError("this request was prepared by another transport");
    const sentAt = process.hrtime.bigint();
    const response = await this.#send("POST", prepared.path, prepared.body, prepared.headers, options);
    if (response.status !== 200) throw this.#errorOf(response);
    const length = headerValue(response.headers, INFERENCE_HEADER_CONTENT_LENGTH);
    const decoded = decodeHttpInfer(response.body, length === undefined ? undefined : Number(length));
    const doneAt = process.hrtime.bigint();
    return new InferResult({
      ...decoded,
      timing: { sendNs: prepared.chargeEncodeNs(), responseWaitNs: Number(response.headersAtNs - sentAt), receiveNs: Number(doneAt - response.headersAtNs) },
    });
  }

  /** Triton's generate extension: the one response of `/generate` for `body` (inputs and parameters by name). */
  async generate(model: string, version: string | undefined, body: Readonly<Record<string, unknown>>, options?: CallOptions): Promise<GenerateResponse> {
    return this.#json("POST", modelPath(model, version, "/generate"), JSON.stringify(body), options);
  }

  /**
   * Triton's `/generate_stream`: yields each server-sent event as it arrives, a response or the error event the
   * server sent instead, until the server ends the stream. Stopping the iteration early closes the connection,
   * which cancels the request on the server.
   */
  generateStream(model: string, version: string | undefined, body: Readonly<Record<string, unknown>>, options?: CallOptions): AsyncIterable<GenerateStreamEvent> {
    const stop = new AbortController();
    const queue = new ResponseQueue<GenerateStreamEvent>(() => stop.abort());
    const signal = options?.signal === undefined ? stop.signal : AbortSignal.any([stop.signal, options.signal]);
    const headers = { ...this.#options.headers, ...options?.headers, "content-type": "application/json", accept: "text/event-stream" };
    const path = this.#basePath + modelPath(model, version, "/generate_stream");
    void this.#pool.request({ method: "POST", path, headers, body: JSON.stringify(body), signal }).then(async (response) => {
      const contentType = headerValue(response.headers, "content-type") ?? "";
      if (!contentType.startsWith("text/event-stream")) {
        const bytes = Buffer.from(await response.body.arrayBuffer());
        queue.fail(this.#errorOf({ status: response.statusCode, headers: response.headers, body: bytes, headersAtNs: process.hrtime.bigint() }));
        return;
      }
      let pending = "";
      for await (const chunk of response.body) {
        pending += (chunk as Buffer).toString("utf8");
        let end: number;
        while ((end = pending.indexOf("\n\n")) >= 0) {
          const event = pending.slice(0, end);
          pending = pending.slice(end + 2);
          const data = event.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart()).join("\n");
          if (data === "") continue;
          const parsed = JSON.parse(data) as Record<string, unknown>;
          queue.push(typeof parsed["error"] === "string" ? { error: errorFromHttpStatus(response.statusCode === 200 ? 400 : response.statusCode, parsed["error"]) } : { response: parsed });
        }
      }
      queue.end();
    }).catch((error: unknown) => queue.fail(options?.signal?.aborted === true ? options.signal.reason : error));
    return queue;
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  async #health(path: string, options?: CallOptions): Promise<boolean> {
    // 400 is Triton's "not live/ready", 503 its answer while shutting down.
    const response = await this.#send("GET", path, undefined, {}, options);
    if (response.status === 200) return true;
    if (response.status === 400 || response.status === 503) return false;
    throw this.#errorOf(response);
  }

  async #json<T>(method: "GET" | "POST", path: string, body: string | undefined, options?: CallOptions): Promise<T> {
    const response = await this.#call(method, path, body, options);
    return JSON.parse(response.body.toString("utf8")) as T;
  }

  async #call(method: "GET" | "POST", path: string, body: string | undefined, options?: CallOptions): Promise<HttpResponse> {
    const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
    const response = await this.#send(method, path, body === undefined ? undefined : Buffer.from(body), headers, options);
    if (response.status !== 200) throw this.#errorOf(response);
    return response;
  }

  async #send(
    method: "GET" | "POST", path: string, body: Buffer | undefined, headers: Readonly<Record<string, string>>, options?: CallOptions,
  ): Promise<HttpResponse> {
    const compression = this.#options.compression;
    const requestHeaders: Record<string, string> = { ...this.#options.headers, ...headers, ...options?.headers };
    let payload = body;
    if (compression !== undefined) {
      requestHeaders["accept-encoding"] = compression;
      if (payload !== undefined && payload.byteLength > 0) {
        payload = await compressors[compression](payload);
        requestHeaders["content-encoding"] = compression;
      }
    }
    const timeoutMs = options?.timeoutMs ?? this.#options.timeoutMs;
    const timeout = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
    const signals = [options?.signal, timeout].filter((signal): signal is AbortSignal => signal !== undefined);
    const signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
    try {
      const response = await this.#pool.request({ method, path: this.#basePath + path, headers: requestHeaders, body: payload, signal });
      const headersAtNs = process.hrtime.bigint();
      let bytes: Buffer = Buffer.from(await response.body.arrayBuffer());
      const encoding = headerValue(response.headers, "content-encoding");
      const decompress = encoding === undefined ? undefined : decompressors[encoding];
      if (decompress !== undefined && bytes.byteLength > 0) bytes = await decompress(bytes);
      return { status: response.statusCode, headers: response.headers, body: bytes, headersAtNs };
    } catch (error) {
      if (timeout?.aborted === true && options?.signal?.aborted !== true) {
        throw new RequestTimeoutError(`${method} ${path}: no answer from ${this.target} within ${timeoutMs} ms`);
      }
      if (options?.signal?.aborted === true) throw options.signal.reason;
      const code = (error as { code?: unknown }).code;
      if (typeof code === "string" && NETWORK_ERROR.test(code)) {
        throw new ServerUnreachableError(`cannot reach the inference server at ${this.target}: ${code} (${(error as Error).message})`, code, error);
      }
      throw error;
    }
  }

  #errorOf(response: HttpResponse): Error {
    const text = response.body.toString("utf8");
    let message = text === "" ? `HTTP ${response.status}` : text;
    try {
      const parsed = JSON.parse(text) as { error?: unknown };
      if (typeof parsed.error === "string") message = parsed.error;
    } catch {
      // Not Triton's {"error": ...} shape (a proxy's page, say): the text itself is the best message.
    }
    return errorFromHttpStatus(response.status, message);
  }
}
