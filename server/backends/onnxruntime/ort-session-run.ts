import * as ort from "onnxruntime-node";
import type { NamedTensor } from "../instance-worker";
import { fromOrtTensor, toOrtTensor } from "./ort-tensors";
import type { OrtWorkerReply, WorkerRequest } from "./ort-worker-protocol";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * One execution of `session` on the calling worker thread, as the reply the main thread waits for (never throws: a
 * failure is a `run-error`) and the output buffers that move with it. Shared by the per-instance worker
 * (ort-worker.ts) and the per-device worker that hosts every WebGPU session of a device (ort-device-worker.ts).
 */
export async function runSession(session: ort.InferenceSession, request: WorkerRequest): Promise<{ reply: OrtWorkerReply; transfer: ArrayBuffer[] }> {
  const { reply, transfer } = await runOnce(session, request);
  const inputBuffers = [...new Set(request.inputs.map((input) => input.data.buffer))]
    .filter((buffer): buffer is ArrayBuffer => buffer instanceof ArrayBuffer && !transfer.includes(buffer));
  return { reply: { ...reply, inputBuffers }, transfer: [...transfer, ...inputBuffers] };
}

async function runOnce(session: ort.InferenceSession, request: WorkerRequest): Promise<{ reply: DistributiveOmit<OrtWorkerReply, "inputBuffers">; transfer: ArrayBuffer[] }> {
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
    return {
      reply: { type: "result", id: request.id, outputs, computeInputNs: Number(t1 - t0), computeInferNs: Number(t2 - t1), computeOutputNs: Number(t3 - t2) },
      transfer,
    };
  } catch (error) {
    return { reply: { type: "run-error", id: request.id, message: error instanceof Error ? error.message : String(error) }, transfer: [] };
  }
}
