/**
 * Candidate (c) of the gRPC transport comparison: a minimal gRPC server of our own on `node:http2` for ModelInfer
 * and ModelStreamInfer only (no TLS, deadlines, limits, compression or health: what it lacks is what the
 * comparison must not forget). Same codec as the grpc-js endpoint (@grpc/proto-loader's protobufjs), same core
 * call (`modelInfer`), so what differs is the transport's own work:
 * - a request message is copied once, into a buffer of its announced length as its DATA chunks arrive (no array of
 *   chunks joined at the end), or not at all when one chunk holds it whole;
 * - a response is written as parts, never joined: the 5-byte prefix, the message without its tensors, and each
 *   `raw_output_contents` entry's tag and length before the tensor's own bytes (HTTP/2 writes them as one writev).
 */
import type { Http2Server, IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import { Cancellation, type InferenceCore } from "../../server/core/index";
import { loadGrpcServiceDefinitions, type EncodedModelInferResponse, grpcErrorOf, modelInfer, modelOf, fieldHeader, INFER_RESPONSE_KEY, RAW_OUTPUT_CONTENTS_KEY, GrpcMessageAssembler, type SharedFrontendParts } from "../../server/index";
import type { ModelInferRequest__Output } from "../../protocol/grpc-types/longs-as-strings/inference/ModelInferRequest";
import type { ModelInferResponse } from "../../protocol/grpc-types/longs-as-strings/inference/ModelInferResponse";

const SERVICE = "/inference.GRPCInferenceService/";
const FINAL_RESPONSE_PARAMETERS = { triton_final_response: { bool_param: true } };
/** grpc-message as the gRPC spec encodes it: only bytes outside printable ASCII, and '%', percent-encoded (UTF-8). */
function percentEncoded(details: string): string {
  return details.replace(/[^\x20-\x24\x26-\x7e]/gu, (c) => encodeURIComponent(c));
}

/** Splits one direction of a gRPC stream into whole messages (without their prefix) as DATA chunks arrive. */
function messageReader(onMessage: (message: Buffer) => void): { push(chunk: Buffer): void } {
  const assembler = new GrpcMessageAssembler(-1);
  return { push: (chunk) => assembler.write(chunk).forEach((framed) => onMessage(framed.subarray(5))) };
}

/** Serves ModelInfer and ModelStreamInfer of `core` on `server`'s streams. */
export function serveOwnGrpc(server: Http2Server, core: InferenceCore, { sharedMemory, requestBudget }: Pick<SharedFrontendParts, "sharedMemory" | "requestBudget">): void {
  const { inference } = loadGrpcServiceDefinitions();
  const decode = inference["ModelInfer"]!.requestDeserialize as (bytes: Buffer) => ModelInferRequest__Output;
  const encodeResponse = inference["ModelInfer"]!.responseSerialize as (message: ModelInferResponse) => Buffer;
  const inferMessage = async (message: ModelInferRequest__Output, cancellation: Cancellation): Promise<EncodedModelInferResponse> =>
    modelInfer(modelOf(core, message), sharedMemory, requestBudget, message, cancellation);

  /** A response as the parts of its body (tensors referenced, not copied) and their total length. */
  const responseParts = (response: EncodedModelInferResponse, parameters?: ModelInferResponse["parameters"]): { parts: Uint8Array[]; length: number } => {
    const head = encodeResponse({ ...response, ...(parameters === undefined ? {} : { parameters }), raw_output_contents: [] });
    const parts: Uint8Array[] = [head];
    let length = head.byteLength;
    for (const data of response.raw_output_contents) {
      const tag = fieldHeader(RAW_OUTPUT_CONTENTS_KEY, data.byteLength);
      parts.push(tag, data);
      length += tag.byteLength + data.byteLength;
    }
    return { parts, length };
  };

  const writeMessage = (stream: ServerHttp2Stream, parts: readonly Uint8Array[], length: number): void => {
    const prefix = Buffer.allocUnsafe(5);
    prefix.writeUInt8(0, 0);
    prefix.writeUInt32BE(length, 1);
    stream.cork();
    stream.write(prefix);
    for (const part of parts) stream.write(part);
    stream.uncork();
  };

  const end = (stream: ServerHttp2Stream, code: number, details: string): void => {
    // Once: a stream that failed part-way is not ended again at its request's end.
    if (stream.destroyed || stream.writableEnded) return;
    if (!stream.headersSent) stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": String(code), ...(details === "" ? {} : { "grpc-message": percentEncoded(details) }) }));
    stream.end();
  };

  const fail = (stream: ServerHttp2Stream, error: unknown): void => {
    const failure = grpcErrorOf(error);
    end(stream, failure.code, failure.details ?? "");
  };

  server.on("stream", (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const path = headers[":path"] ?? "";
    const cancellation = new Cancellation();
    stream.once("close", () => cancellation.abort());
    if (path === `${SERVICE}ModelInfer`) {
      let request: Buffer | undefined;
      const reader = messageReader((message) => (request = message));
      stream.on("data", (chunk: Buffer) => reader.push(chunk));
      stream.once("end", () => {
        if (request === undefined) return end(stream, 13, "no request message");
        const message = decode(request);
        // The stream's closures outlive the call and are often promoted with it: they must not keep the message's bytes.
        request = undefined;
        inferMessage(message, cancellation).then((response) => {
          const { parts, length } = responseParts(response);
          stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
          writeMessage(stream, parts, length);
          end(stream, 0, "");
        }, (error: unknown) => fail(stream, error));
      });
      return;
    }
    if (path === `${SERVICE}ModelStreamInfer`) {
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      let written: Promise<void> = Promise.resolve();
      const reader = messageReader((message) => {
        const outcome = inferMessage(decode(message), cancellation);
        written = written.then(async () => {
          try {
            const inner = responseParts(await outcome, FINAL_RESPONSE_PARAMETERS);
            const tag = fieldHeader(INFER_RESPONSE_KEY, inner.length);
            writeMessage(stream, [tag, ...inner.parts], tag.byteLength + inner.length);
          } catch (error) {
            fail(stream, error);
          }
        });
      });
      stream.on("data", (chunk: Buffer) => reader.push(chunk));
      stream.once("end", () => void written.then(() => end(stream, 0, "")));
      return;
    }
    stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": "12", "grpc-message": "Method not found" }, { endStream: true });
  });
}
