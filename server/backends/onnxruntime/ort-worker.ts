/**
 * Runs inside a worker thread and owns exactly one InferenceSession: onnxruntime-node's run() is synchronous on
 * its calling thread, so each model instance gets a thread of its own and the main thread never blocks.
 */
import { parentPort, workerData } from "node:worker_threads";
import * as ort from "onnxruntime-node";
import { describeSession } from "./ort-tensors";
import { runSession } from "./ort-session-run";
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
  const { reply, transfer } = await runSession(session, request);
  post(reply, transfer);
}

void main();
