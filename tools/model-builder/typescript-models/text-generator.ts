/**
 * `text_generator` (backend "typescript", decoupled): a toy byte-level text generator that streams one token per
 * response, for trying out decoupled models (gRPC ModelStreamInfer, `/generate_stream`) without a language
 * model. It learns byte bigrams from the prompt `text_input` and extends the prompt by the most frequent successor
 * of its last byte, `max_tokens` times (request parameter, default 16); each response's `text_output` is one
 * byte, then the final flag comes alone. Deterministic: the same prompt always streams the same bytes.
 * `execute` returns at once; generation goes on between event-loop turns, so one instance serves many requests
 * at a time, a cancelled request stops at its next token, and a client that reads slowly holds its generation back.
 */
import type { ExecuteRequest, ResponseSender, TypeScriptModel } from "gcp-inference-stack/typescript-backend";

const DEFAULT_MAX_TOKENS = 16;
const LIMIT_MAX_TOKENS = 100_000;

/** For each byte, the byte that most often follows it in `prompt` (ties: the smaller byte); -1 when none does. */
function successors(prompt: Uint8Array): Int16Array {
  const counts = new Uint32Array(256 * 256);
  for (let i = 1; i < prompt.length; i++) counts[prompt[i - 1]! * 256 + prompt[i]!]!++;
  const next = new Int16Array(256).fill(-1);
  for (let from = 0; from < 256; from++) {
    let best = 0;
    for (let to = 0; to < 256; to++) {
      const count = counts[from * 256 + to]!;
      if (count > best) {
        best = count;
        next[from] = to;
      }
    }
  }
  return next;
}

function maxTokens(request: ExecuteRequest): number | string {
  const value = request.parameters["max_tokens"] ?? DEFAULT_MAX_TOKENS;
  const count = typeof value === "string" ? Number(value) : Number(value);
  if (!Number.isSafeInteger(count) || count < 0 || count > LIMIT_MAX_TOKENS) {
    return `request parameter 'max_tokens' must be an integer from 0 to ${LIMIT_MAX_TOKENS}, got '${String(value)}'`;
  }
  return count;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function generate(prompt: Uint8Array, count: number, sender: ResponseSender): Promise<void> {
  const next = successors(prompt);
  let last = prompt.length > 0 ? prompt[prompt.length - 1]! : 0x20;
  for (let i = 0; i < count; i++) {
    if (sender.isCancelled()) return;
    const token = next[last]! >= 0 ? next[last]! : prompt.length > 0 ? prompt[0]! : 0x20;
    // Waits while the client is behind (flow control); else yields, so one instance serves many requests at a time.
    await Promise.all([sender.send({ outputs: { text_output: { datatype: "BYTES", shape: [1], data: [Uint8Array.of(token)] } } }), nextTurn()]);
    last = token;
  }
  if (!sender.isCancelled()) sender.send(undefined, { final: true });
}

export default class TextGenerator implements TypeScriptModel {
  execute(requests: readonly ExecuteRequest[]): void {
    for (const request of requests) {
      const sender = request.responseSender;
      if (sender === undefined) throw new Error("text_generator must be decoupled (model_transaction_policy { decoupled: true })");
      const count = maxTokens(request);
      if (typeof count === "string") {
        sender.send({ error: { code: "INVALID_ARG", message: count } }, { final: true });
        continue;
      }
      const prompt = request.inputs["text_input"];
      if (prompt?.datatype !== "BYTES") throw new Error("text_input must be a BYTES tensor");
      const text = prompt.data[0] ?? new Uint8Array(0);
      void generate(text.slice(), count, sender).catch((error: unknown) => {
        // A send refused because the client cancelled meanwhile ends the generation quietly.
        if (!sender.isCancelled()) throw error;
      });
    }
  }
}
