import * as ort from "onnxruntime-node";
import { concatenateParts } from "../batch-io";
import type { NamedTensor } from "../instance-worker";
import { SpareBuffers } from "../spare-buffers";
import { fromOrtTensor, toOrtTensor } from "./ort-tensors";
import type { OrtWorkerReply, ThreadBatchInput, WorkerRequest } from "./ort-worker-protocol";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Batches this thread gathers from request memory it shares with the main thread, in memory it has used before. */
const threadSpares = new SpareBuffers();

/**
 * One execution of `session` on the calling worker thread, as the reply the main thread waits for (never throws: a
 * failure is a `run-error`) and the output buffers that move with it. Shared by the per-instance worker
 * (ort-worker.ts) and the per-device worker that hosts every WebGPU session of a device (ort-device-worker.ts).
 */
export async function runSession(session: ort.InferenceSession, request: WorkerRequest): Promise<{ reply: OrtWorkerReply; transfer: ArrayBuffer[] }> {
  const gathered: ArrayBuffer[] = [];
  const { reply, transfer } = await runOnce(session, request, gathered);
  threadSpares.give(gathered);
  const inputBuffers = [...new Set(request.inputs.map((input) => gatheredOnMain(input)?.buffer))]
    .filter((buffer): buffer is ArrayBuffer => buffer !== undefined && !transfer.includes(buffer));
  return { reply: { ...reply, inputBuffers }, transfer: [...transfer, ...inputBuffers] };
}

/** The batch the main thread gathered for `input` (one part, in a buffer that moved here and moves back), if it did. */
function gatheredOnMain(input: ThreadBatchInput): Uint8Array<ArrayBuffer> | undefined {
  const [only, ...rest] = input.parts;
  return only !== undefined && rest.length === 0 && only.buffer instanceof ArrayBuffer ? only as Uint8Array<ArrayBuffer> : undefined;
}

/**
 * An input's bytes for ONNX Runtime: the batch the main thread gathered as it is, or the requests' parts in shared
 * memory gathered into a buffer of this thread's (listed in `gathered`, to keep for later batches once the run is
 * over). ONNX Runtime is never handed shared memory itself: Node 20's onnxruntime-node refuses it.
 */
async function inputBytes(input: ThreadBatchInput, gathered: ArrayBuffer[]): Promise<Uint8Array> {
  const onMain = gatheredOnMain(input);
  if (onMain !== undefined) return onMain;
  const data = await concatenateParts(input.parts, (byteLength) => threadSpares.take(byteLength));
  gathered.push(data.buffer);
  return data;
}

async function runOnce(
  session: ort.InferenceSession, request: WorkerRequest, gathered: ArrayBuffer[],
): Promise<{ reply: DistributiveOmit<OrtWorkerReply, "inputBuffers">; transfer: ArrayBuffer[] }> {
  try {
    const t0 = process.hrtime.bigint();
    const feeds: Record<string, ort.Tensor> = {};
    for (const input of request.inputs) {
      feeds[input.name] = toOrtTensor(ort, { datatype: input.datatype, shape: input.shape, data: await inputBytes(input, gathered) });
    }
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
