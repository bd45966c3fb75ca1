/**
 * Child process of `npm run bench`: ONNX Runtime in-process, no server in the way. It creates the session the
 * server's ORT backend creates for the same instance (execution providers and session options come from the
 * backend's own functions) and runs it back to back for as long as it is asked, on data prepared up front.
 */
import * as ort from "onnxruntime-node";
import { chooseExecutionProviders, sessionSettings, ortSessionOptions } from "../server/index";
import { toFloat16Array } from "../protocol/float16";
import type { OrtBaselineMessage, OrtBaselineRequest, OrtBaselineSettings } from "./ort-baseline-protocol";

const settings = JSON.parse(process.argv[2] ?? "{}") as OrtBaselineSettings;

function send(message: OrtBaselineMessage): void {
  process.send?.(message);
}

async function measure(session: ort.InferenceSession, request: OrtBaselineRequest): Promise<OrtBaselineMessage> {
  const shape = [request.batchSize, ...settings.elementShape];
  const data = Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => Math.random());
  const tensor = settings.inputDatatype === "FP16" ? new ort.Tensor("float16", toFloat16Array(data), shape) : new ort.Tensor("float32", data, shape);
  const feeds = { [settings.inputName]: tensor };
  const warmupEnd = Date.now() + request.warmupMs;
  do {
    await session.run(feeds);
  } while (Date.now() < warmupEnd);
  const runLatenciesNs: number[] = [];
  const start = process.hrtime.bigint();
  const end = start + BigInt(request.durationMs) * 1_000_000n;
  let now = start;
  while (now < end) {
    const before = now;
    await session.run(feeds);
    now = process.hrtime.bigint();
    runLatenciesNs.push(Number(now - before));
  }
  return { type: "measured", runLatenciesNs, durationNs: Number(now - start), batchSize: request.batchSize };
}

async function main(): Promise<void> {
  const instance = settings.instance;
  const options = ortSessionOptions(sessionSettings(instance, chooseExecutionProviders(instance).executionProviders));
  const session = await ort.InferenceSession.create(instance.modelPath, options as ort.InferenceSession.SessionOptions);
  process.on("message", (request: OrtBaselineRequest) => {
    measure(session, request).then(send, (error: unknown) => send({ type: "failed", message: (error as Error).message }));
  });
  process.on("disconnect", () => process.exit(0));
  send({ type: "ready" });
}

main().catch((error: unknown) => {
  send({ type: "failed", message: (error as Error).message });
  process.exitCode = 1;
});
