/**
 * `image_postprocess` (backend "typescript"): class probabilities in (FP16 or FP32, one row per batch element),
 * the top `k` classes out as BYTES `"<score>:<index>:<label>"`, the format of Triton's classification extension
 * (score with 6 decimals, as Triton prints it). `k` is the request parameter `k` (default 1); the labels come from
 * the file the `label_filename` parameter names, in the model's directory, one per line.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import {
  type ExecuteRequest, type ExecuteResponse, fp16ToFloat32Array, type InitializeArgs, type Tensor, type TypeScriptModel,
} from "gcp-inference-stack/typescript-backend";

function scoresOf(tensor: Tensor): Float32Array | Float64Array {
  if (tensor.datatype === "FP16") return fp16ToFloat32Array(tensor.data);
  if (tensor.datatype === "FP32" || tensor.datatype === "FP64") return tensor.data;
  throw new Error(`PROBABILITIES must be FP16, FP32 or FP64, not ${tensor.datatype}`);
}

export default class ImagePostprocess implements TypeScriptModel {
  #labels: readonly string[] = [];

  initialize(args: InitializeArgs): void {
    const file = args.modelConfig.parameters["label_filename"]?.string_value;
    if (file === undefined) return;
    const resolved = path.resolve(args.modelDirectory, file);
    if (path.relative(args.modelDirectory, resolved).startsWith("..")) throw new Error(`label_filename '${file}' points outside the model directory`);
    this.#labels = readFileSync(resolved, "utf8").split(/\r?\n/).filter((line, i, lines) => line !== "" || i < lines.length - 1);
  }

  execute(requests: readonly ExecuteRequest[]): ExecuteResponse[] {
    return requests.map((request) => this.#topK(request));
  }

  #topK(request: ExecuteRequest): ExecuteResponse {
    const k = Number(request.parameters["k"] ?? 1);
    if (!Number.isSafeInteger(k) || k < 1) return { error: { code: "INVALID_ARG", message: `request parameter 'k' must be a positive integer, got '${String(request.parameters["k"])}'` } };
    const probabilities = request.inputs["PROBABILITIES"];
    if (probabilities === undefined) throw new Error("the request has no input 'PROBABILITIES'");
    const scores = scoresOf(probabilities);
    const batch = probabilities.shape[0] ?? 1;
    const classes = scores.length / batch;
    const count = Math.min(k, classes);
    const results: string[] = [];
    for (let b = 0; b < batch; b++) {
      const row = scores.subarray(b * classes, (b + 1) * classes);
      const order = Array.from({ length: classes }, (_, i) => i).sort((x, y) => row[y]! - row[x]! || x - y);
      for (const index of order.slice(0, count)) {
        const label = this.#labels[index];
        results.push(`${row[index]!.toFixed(6)}:${index}${label !== undefined ? `:${label}` : ""}`);
      }
    }
    return { outputs: { CLASSES: { datatype: "BYTES", shape: [batch, count], data: results } } };
  }
}
