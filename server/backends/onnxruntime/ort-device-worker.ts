/**
 * Runs inside the one worker thread that hosts every WebGPU session of a device (ort-device-thread.ts).
 *
 * ONNX Runtime keeps one WebGPU context per device for the whole process, and that context is not safe to use
 * from two threads at once: two worker threads each running a WebGPU session at the same time crash the process
 * (SIGSEGV in webgpu_context.cc's DispatchCommand, seen on an H200 and on Mesa's lavapipe). onnxruntime-node runs
 * a session synchronously on its calling thread, so sessions that share this thread never run at the same time,
 * and a device serializes its work anyway (two sessions on one thread give the throughput of one on an H200).
 */
import { parentPort } from "node:worker_threads";
import * as ort from "onnxruntime-node";
import { describeSession } from "./ort-tensors";
import { runSession } from "./ort-session-run";
import { ortSessionOptions, type DeviceThreadReply, type DeviceThreadRequest } from "./ort-worker-protocol";

const port = parentPort;
if (port === null) throw new Error("ort-device-worker must run in a worker thread");

const sessions = new Map<number, ort.InferenceSession>();
/** The run each session has in progress: a close waits for it, as releasing a session mid-run is undefined. */
const running = new Map<number, Promise<void>>();

function post(message: DeviceThreadReply, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

async function open(sessionId: number, settings: Extract<DeviceThreadRequest, { type: "open" }>["settings"]): Promise<void> {
  try {
    const session = await ort.InferenceSession.create(settings.modelPath, ortSessionOptions(settings) as ort.InferenceSession.SessionOptions);
    sessions.set(sessionId, session);
    post({ type: "opened", sessionId, io: describeSession(session) });
  } catch (error) {
    post({ type: "open-error", sessionId, message: error instanceof Error ? error.message : String(error) });
  }
}

async function run(sessionId: number, request: Extract<DeviceThreadRequest, { type: "run" }>["request"]): Promise<void> {
  const session = sessions.get(sessionId);
  if (session === undefined) {
    post({ type: "ran", sessionId, reply: { type: "run-error", id: request.id, message: "the instance's session is closed", inputBuffers: [] } });
    return;
  }
  const { reply, transfer } = await runSession(session, request);
  post({ type: "ran", sessionId, reply }, transfer);
}

async function close(sessionId: number): Promise<void> {
  await running.get(sessionId);
  const session = sessions.get(sessionId);
  sessions.delete(sessionId);
  await session?.release();
  post({ type: "closed", sessionId });
}

port.on("message", (message: DeviceThreadRequest) => {
  if (message.type === "open") void open(message.sessionId, message.settings);
  else if (message.type === "close") void close(message.sessionId);
  else {
    const done = run(message.sessionId, message.request).finally(() => {
      if (running.get(message.sessionId) === done) running.delete(message.sessionId);
    });
    running.set(message.sessionId, done);
  }
});
