const onnxModelPattern = /^\s*(platform:\s*"onnxruntime_onnx"|backend:\s*"onnxruntime")\s*$/m;
const cpuOrAutoKindPattern = /\bkind:\s*KIND_(CPU|AUTO)\b/g;

const GPU_INSTANCE_GROUP = ["instance_group [", "  {", "    count: 1", "    kind: KIND_GPU", "  }", "]"].join("\n");

/**
 * Rewrites a Triton `config.pbtxt` so that an ONNX model runs on the GPU: every `instance_group` kind
 * becomes KIND_GPU, or one GPU instance group is added when the config has none (Triton would pick
 * KIND_AUTO). The example repository is built for CPU machines; the T4 fleet serves the same files with
 * this one change. Other backends (identity, ensembles) are returned unchanged.
 */
export function toGpuModelConfig(configText: string): string {
  if (!onnxModelPattern.test(configText)) return configText;
  if (/\binstance_group\b/.test(configText)) return configText.replace(cpuOrAutoKindPattern, "kind: KIND_GPU");
  return `${configText.replace(/\s*$/, "")}\n${GPU_INSTANCE_GROUP}\n`;
}
