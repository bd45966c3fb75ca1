import type { InferenceClient, InferInput, InferOptions } from "../../client/index";
import type { RequestSender } from "./load-generator";
import { summarizeLatencies } from "./latency-summary";

/** What streamed requests delivered: each stream's time to its first response, and how many responses came. */
export class StreamRecorder {
  #firstResponseNs: number[] = [];
  #responses = 0;
  #streams = 0;

  record(firstResponseNs: number | undefined, responses: number): void {
    if (firstResponseNs !== undefined) this.#firstResponseNs.push(firstResponseNs);
    this.#responses += responses;
    this.#streams++;
  }

  /** Forgets what was recorded (after a warm-up). */
  reset(): void {
    this.#firstResponseNs = [];
    this.#responses = 0;
    this.#streams = 0;
  }

  /** Time-to-first-response percentiles (ms) and the mean responses per stream. */
  summary(): { readonly firstResponseMs: ReadonlyMap<number, number>; readonly responsesPerStream: number; readonly streams: number } {
    const percentilesNs = this.#firstResponseNs.length === 0 ? new Map<number, number>() : summarizeLatencies(this.#firstResponseNs).percentilesNs;
    const firstResponseMs = new Map([...percentilesNs].map(([p, ns]) => [p, ns / 1e6]));
    return { firstResponseMs, responsesPerStream: this.#streams === 0 ? 0 : this.#responses / this.#streams, streams: this.#streams };
  }
}

/** Inputs as Triton's generate extension takes them: each input's values by name (one element bare), then the parameters. */
export function generateBody(inputs: readonly InferInput[], parameters: InferOptions["parameters"]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const input of inputs) {
    const values = [...(input.data as Iterable<unknown>)].map((value) => (value instanceof Uint8Array ? Buffer.from(value).toString("utf8") : value));
    body[input.name] = values.length === 1 ? values[0] : values;
  }
  return { ...body, ...(parameters === undefined ? {} : { parameters }) };
}

/**
 * Sends one streamed request per call and resolves when its stream ended: over gRPC ModelStreamInfer, over HTTP
 * Triton's `/generate_stream`. Records each stream's time to first response and its response count in `recorder`;
 * an error response fails the request.
 */
export function streamingSender(
  client: InferenceClient, model: string, inputs: readonly InferInput[], options: InferOptions, recorder: StreamRecorder,
): RequestSender {
  const body = generateBody(inputs, options.parameters);
  return async () => {
    const startNs = process.hrtime.bigint();
    let firstNs: number | undefined;
    let responses = 0;
    const seen = (): void => {
      firstNs ??= Number(process.hrtime.bigint() - startNs);
      responses++;
    };
    if (client.protocol === "grpc") {
      for await (const response of client.inferStream(model, inputs, options)) {
        if ("error" in response) throw response.error;
        seen();
      }
    } else {
      for await (const event of client.generateStream(model, body, { version: options.modelVersion })) {
        if ("error" in event) throw event.error;
        seen();
      }
    }
    recorder.record(firstNs, responses);
    return { sendNs: 0, receiveNs: 0 };
  };
}
