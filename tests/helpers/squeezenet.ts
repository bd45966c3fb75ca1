import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import * as jpeg from "jpeg-js";
import { float16Bits } from "../../protocol/float16";
import { SHARED_DATA } from "./server-process";

/**
 * A temporary model repository serving the real SqueezeNet 1.1 (FP16) from ../shared/data as `squeezenet`, with
 * Triton's ImageNet labels for the classification extension. The model file is copied into the temporary
 * repository (never into this one): a symlink out of the model directory would be refused.
 */
export function squeezenetRepository(): string {
  const repository = mkdtempSync(path.join(os.tmpdir(), "squeezenet-repo-"));
  const model = path.join(repository, "squeezenet");
  mkdirSync(path.join(model, "1"), { recursive: true });
  copyFileSync(path.join(SHARED_DATA, "models", "squeezenet1.1_fp16", "SqueezeNet_fp16.onnx"), path.join(model, "1", "model.onnx"));
  copyFileSync(path.join(SHARED_DATA, "labels", "densenet_labels.txt"), path.join(model, "labels.txt"));
  writeFileSync(path.join(model, "config.pbtxt"), [
    'platform: "onnxruntime_onnx"',
    "max_batch_size: 0",
    'input [ { name: "data_0" data_type: TYPE_FP16 dims: [ 1, 3, 224, 224 ] } ]',
    'output [ { name: "softmaxout_1" data_type: TYPE_FP16 dims: [ 1, 1000, 1, 1 ] label_filename: "labels.txt" } ]',
    "instance_group [ { count: 1 kind: KIND_CPU } ]",
  ].join("\n"));
  return repository;
}

/**
 * ../shared/data/images/mug.jpg preprocessed as ../shared/data/README.md says for this Caffe2-exported model:
 * bilinear resize (half-pixel centres, no antialias) straight to 224x224, BGR, raw 0-255, NCHW, FP16.
 */
export function mugInputFp16(): Uint8Array {
  const image = jpeg.decode(readFileSync(path.join(SHARED_DATA, "images", "mug.jpg")), { formatAsRGBA: true, maxMemoryUsageInMB: 1024 });
  const size = 224;
  const out = new Uint16Array(3 * size * size);
  const scaleX = image.width / size;
  const scaleY = image.height / size;
  const pixel = (x: number, y: number, c: number): number => image.data[(y * image.width + x) * 4 + c]!;
  for (let y = 0; y < size; y++) {
    const sy = Math.min(Math.max((y + 0.5) * scaleY - 0.5, 0), image.height - 1);
    const y0 = Math.floor(sy);
    const y1 = Math.min(y0 + 1, image.height - 1);
    const wy = sy - y0;
    for (let x = 0; x < size; x++) {
      const sx = Math.min(Math.max((x + 0.5) * scaleX - 0.5, 0), image.width - 1);
      const x0 = Math.floor(sx);
      const x1 = Math.min(x0 + 1, image.width - 1);
      const wx = sx - x0;
      for (let c = 0; c < 3; c++) {
        const value = (1 - wy) * ((1 - wx) * pixel(x0, y0, c) + wx * pixel(x1, y0, c)) + wy * ((1 - wx) * pixel(x0, y1, c) + wx * pixel(x1, y1, c));
        // RGB source channel c lands in BGR plane 2 - c.
        out[(2 - c) * size * size + y * size + x] = float16Bits(value);
      }
    }
  }
  return new Uint8Array(out.buffer);
}
