/**
 * Runs inside a worker thread and owns exactly one InferenceSession: onnxruntime-node's run() is synchronous on
 * its calling thread, so each model instance gets a thread of its own and the main thread never blocks.
 */
import { parentPort, workerData } from "node:worker_threads";
import * as ort from "onnxruntime-node";
import { describeSession, fromOrtTensor, toOrtTensor } from "./ort-tensors";
import type { NamedTensor } from "../instance-worker";
import { ortSessionOptions, type OrtSessionSettings, type OrtStartupMessage, type OrtWorkerReply, type WorkerRequest } from "./ort-worker-protocol";

const port = parentPort;
if (port === null) throw new Error("ort-worker must run in a worker thread");

const settings = workerData as OrtSessionSettings;

function post(message: OrtStartupMessage | OrtWorkerReply, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

async function main(): Promise<void> {
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(settings.modelPath, ortSessionOptions(settings) as ort.InferenceSession.SessionOptions);
    post({ type: "ready", ready: describeSession(session) });
  } catch (error) {
    post({ type: "load-error", message: error instanceof Error ? error.message : String(error) });
    return;
  }
  port!.on("message", (request: WorkerRequest) => {
    void run(session, request);
  });
}

async function run(session: ort.InferenceSession, request: WorkerRequest): Promise<void> {
  try {
    const t0 = process.hrtime.bigint();
    const feeds: Record<string, ort.Tensor> = {};
    for (const input of request.inputs) feeds[input.name] = toOrtTensor(ort, input);
    const t1 = process.hrtime.bigint();
    const results = await session.run(feeds, [...request.outputNames]);
    const t2 = process.hrtime.bigint();
    const outputs: NamedTensor[] = [];
    const transfer: ArrayBuffer[] = [];
    for (const name of request.outputNames) {
      const value = results[name];
      if (value === undefined) throw new Error(`the model produced no output '${name}'`);
      // Numeric output memory belongs to ONNX Runtime; one copy into a buffer we own lets it cross threads for free.
      // A string tensor's bytes were already joined into a buffer of their own (joinBytesStrings) and move as they are.
      const tensor = fromOrtTensor(value);
      const data = value.type === "string" ? tensor.data as Uint8Array<ArrayBuffer> : new Uint8Array(tensor.data);
      transfer.push(data.buffer);
      outputs.push({ name, datatype: tensor.datatype, shape: tensor.shape, data });
    }
    for (const value of Object.values(feeds)) value.dispose();
    for (const value of Object.values(results)) value.dispose();
    const t3 = process.hrtime.bigint();
    post({
      type: "result", id: request.id, outputs,
      computeInputNs: Number(t1 - t0), computeInferNs: Number(t2 - t1), computeOutputNs: Number(t3 - t2),
    }, transfer);
  } catch (error) {
    post({ type: "run-error", id: request.id, message: error instanceof Error ? error.message : String(error) });
  }
}

void main();
