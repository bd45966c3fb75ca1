import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { EXAMPLE_REPOSITORY } from "./server-process";

const SIMPLE_ONNX = path.join(EXAMPLE_REPOSITORY, "simple", "1", "model.onnx");

/**
 * Writes `<repository>/<name>` as Triton's `simple` (OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1 over
 * INT32[16]) with version 1 and `config` appended to `platform: "onnxruntime_onnx"`; returns the model directory.
 */
export function writeSimpleModel(repository: string, name: string, config: string): string {
  const directory = path.join(repository, name);
  mkdirSync(path.join(directory, "1"), { recursive: true });
  copyFileSync(SIMPLE_ONNX, path.join(directory, "1", "model.onnx"));
  writeFileSync(path.join(directory, "config.pbtxt"), `platform: "onnxruntime_onnx"\n${config}`);
  return directory;
}
