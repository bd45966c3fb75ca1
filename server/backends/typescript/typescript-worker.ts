/**
 * Runs inside a worker thread and owns exactly one instance of a TypeScript model: loads model.js, calls
 * initialize(), then execute() once per batch the scheduler sends, and finalize() before it exits. Whatever the
 * model throws becomes an error message for the main thread; what it throws outside those calls (a timer, an
 * unhandled rejection) ends this thread, and the main thread replaces the instance.
 */
import { parentPort, workerData } from "node:worker_threads";
import { ERROR_CODES, isErrorCode } from "../../../protocol/error-codes";
import type { NamedTensor } from "../instance-worker";
import { loadModelClass } from "./load-model-class";
import { ModelCallClient } from "./model-call-client";
import type { ModelCallAnswer } from "./model-call-protocol";
import { backendTensor, modelTensor } from "./model-tensors";
import type { ExecuteRequest, ExecuteResponse, TypeScriptModel } from "./typescript-model";
import type {
  ExecutionEnd, ExecutionReply, StreamResponseMessage, TypeScriptStartupMessage, TypeScriptWorkerData, TypeScriptWorkerReply, TypeScriptWorkerRequest,
  WireRequest, WireResponse,
} from "./typescript-worker-protocol";
import { WorkerResponseSender } from "./worker-response-sender";

const port = parentPort;
if (port === null) throw new Error("typescript-worker must run in a worker thread");
const settings = workerData as TypeScriptWorkerData;

/**
 * process.kill signals whole processes (this server's own pid among them: SIGTERM would shut the server down), so a
 * model may not call it, as Node already refuses process.abort() in a worker. process.exit() and
 * process.reallyExit() stay: in a worker they end only this thread, and the instance is restarted.
 */
process.kill = () => {
  throw Object.assign(new Error("process.kill() is not allowed in a TypeScript model"), { code: "ERR_WORKER_UNSUPPORTED_OPERATION" });
};

function post(message: TypeScriptStartupMessage | TypeScriptWorkerReply | StreamResponseMessage, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

const modelCalls = new ModelCallClient((message, transfer) => port!.postMessage(message, transfer));

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function toExecuteRequest(request: WireRequest): ExecuteRequest {
  const inputs: ExecuteRequest["inputs"] = Object.fromEntries(request.inputs.map((tensor) => [tensor.name, modelTensor(tensor)]));
  const responseSender = request.stream === undefined ? undefined : new WorkerResponseSender(request.stream, post, toWireResponse);
  return { inputs, parameters: request.parameters, requestedOutputs: request.requestedOutputs, responseSender };
}

/** One response as it crosses back; a malformed one fails its own request, naming what is wrong. */
function toWireResponse(response: ExecuteResponse | undefined, transfer: ArrayBuffer[]): WireResponse {
  if (typeof response !== "object" || response === null) return modelBug("a response is not an object");
  if ("error" in response) {
    const { message, code } = response.error as { message?: unknown; code?: unknown };
    const text = typeof message === "string" ? message : String(message);
    if (code === undefined) return { error: { code: "INTERNAL", message: text } };
    if (isErrorCode(code)) return { error: { code, message: text } };
    return modelBug(`a response's error code ${JSON.stringify(code)} is not one of ${ERROR_CODES.join(", ")} (message: ${text})`);
  }
  if (typeof response.outputs !== "object" || response.outputs === null) return modelBug("a response has neither outputs nor error");
  const outputs: NamedTensor[] = [];
  for (const [name, tensor] of Object.entries(response.outputs)) {
    try {
      outputs.push({ name, ...backendTensor(tensor, transfer) });
    } catch (error) {
      return modelBug(`output '${name}' ${messageOf(error)}`);
    }
  }
  return { outputs };
}

function modelBug(detail: string): WireResponse {
  return { error: { code: "INTERNAL", message: `TypeScript model execute() returned an invalid response: ${detail}` } };
}

/** A decoupled batch whose execution failed: the main thread ends its streams, and the model's later sends throw. */
function closeSenders(requests: readonly ExecuteRequest[]): void {
  for (const request of requests) (request.responseSender as WorkerResponseSender | undefined)?.close();
}

/** Runs one execute() call: how it ended (its times aside), and the buffers its responses move to the main thread. */
async function execute(
  model: TypeScriptModel, wire: readonly WireRequest[], group?: { readonly requestOffset: number },
): Promise<{ reply: ExecutionEnd; transfer: ArrayBuffer[] }> {
  let endCalls = (): void => undefined;
  try {
    const t0 = process.hrtime.bigint();
    const requests = wire.map(toExecuteRequest);
    const calls = modelCalls.open(requests, group);
    endCalls = calls.end;
    const t1 = process.hrtime.bigint();
    let responses: Awaited<ReturnType<TypeScriptModel["execute"]>>;
    try {
      responses = await model.execute(requests, calls.context);
    } catch (error) {
      closeSenders(requests);
      throw error;
    }
    endCalls();
    const t2 = process.hrtime.bigint();
    if (wire[0]?.stream !== undefined) {
      if (responses !== undefined) {
        closeSenders(requests);
        // As Triton's Python backend insists that a decoupled model's execute returns None.
        throw new Error("the model is decoupled, so execute() must return nothing (it answers through request.responseSender)");
      }
      return { reply: { type: "responses", responses: [], computeInputNs: Number(t1 - t0), computeInferNs: Number(t2 - t1), computeOutputNs: 0 }, transfer: [] };
    }
    if (!Array.isArray(responses) || responses.length !== requests.length) {
      const count = Array.isArray(responses) ? `${responses.length} responses` : typeof responses;
      throw new Error(`execute() must return one response per request: got ${count} for ${requests.length} requests`);
    }
    const transfer: ArrayBuffer[] = [];
    const answers = responses.map((response: ExecuteResponse | undefined) => toWireResponse(response, transfer));
    const t3 = process.hrtime.bigint();
    return {
      reply: { type: "responses", responses: answers, computeInputNs: Number(t1 - t0), computeInferNs: Number(t2 - t1), computeOutputNs: Number(t3 - t2) },
      transfer,
    };
  } catch (error) {
    endCalls();
    return { reply: { type: "execute-error", message: `TypeScript model execute() failed: ${messageOf(error)}` }, transfer: [] };
  }
}

/**
 * The executions one after the other, in order, answered together. A model call names its request across all of
 * them; in a group, the calls of an execution that ended are cancelled here (the main thread sees the group end only).
 */
async function executeAll(model: TypeScriptModel, id: number, executions: readonly (readonly WireRequest[])[]): Promise<void> {
  const results: ExecutionReply[] = [];
  const transfer: ArrayBuffer[] = [];
  let requestOffset = 0;
  for (const wire of executions) {
    const startNs = process.hrtime.bigint();
    const outcome = await execute(model, wire, executions.length > 1 ? { requestOffset } : undefined);
    results.push({ ...outcome.reply, startNs, endNs: process.hrtime.bigint() });
    transfer.push(...outcome.transfer);
    requestOffset += wire.length;
  }
  post({ type: "executed", id, results }, transfer);
}

async function main(): Promise<void> {
  let model: TypeScriptModel;
  try {
    const ModelClass = loadModelClass(settings.modelPath);
    model = new ModelClass();
    if (typeof model.execute !== "function") throw new Error(`${settings.modelPath}: the model class has no execute() method`);
  } catch (error) {
    post({ type: "load-error", message: `cannot load TypeScript model: ${messageOf(error)}` });
    return;
  }
  try {
    await model.initialize?.(settings.initializeArgs);
  } catch (error) {
    post({ type: "load-error", message: `TypeScript model initialize() failed: ${messageOf(error)}` });
    return;
  }
  port!.on("message", (request: TypeScriptWorkerRequest | ModelCallAnswer) => {
    if (request.type === "model-call-answer") {
      modelCalls.settle(request);
    } else if (request.type === "execute") {
      void executeAll(model, request.id, request.executions);
    } else {
      Promise.resolve(model.finalize?.()).catch((error: unknown) => console.error(`TypeScript model finalize() failed: ${messageOf(error)}`))
        .finally(() => process.exit(0));
    }
  });
  post({ type: "ready", ready: null });
}

void main();
