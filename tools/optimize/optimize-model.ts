import { calibrateRanges, type CalibrationOptions, type CalibrationSample } from "./calibrate";
import { eliminateNoOps } from "./eliminate-dropout";
import { float16ToFloat32, hasFloat16 } from "./float16-to-float32";
import { float32ToFloat16 } from "./float32-to-float16";
import { foldBatchNormIntoConv } from "./fold-batch-norm";
import { cloneOnnxModel, type OnnxModel } from "./onnx-model";
import { removeInitializerInputs } from "./prune-initializers";
import { activationsToCalibrate, quantizeQdq } from "./qdq-quantizer";
import { quantizeDynamic } from "./dynamic-quantizer";
import type { QuantType } from "./quant-math";
import { upgradeToQdqOpset } from "./upgrade-opset";

export type Precision = "fp16" | "int8" | "int8-dynamic";
export const PRECISIONS: readonly Precision[] = ["fp16", "int8", "int8-dynamic"];

/**
 * The FP32 model every variant starts from, and which they are compared against: FP16 weights widened (exact),
 * weights no longer listed as inputs (IR < 4), inference no-ops removed and BatchNormalization folded into Conv.
 * All of these are exact rewrites or what ONNX Runtime itself does at session start.
 */
export function prepareFloat32(source: OnnxModel): OnnxModel {
  let model = hasFloat16(source) ? float16ToFloat32(source) : cloneOnnxModel(source);
  removeInitializerInputs(model.graph);
  if ((model.ir_version ?? 0) < 4) model.ir_version = 4;
  model = eliminateNoOps(model);
  return foldBatchNormIntoConv(model);
}

export interface Int8Settings {
  readonly calibration: CalibrationOptions;
  readonly samples: () => Iterable<CalibrationSample>;
  readonly activationType: QuantType;
  readonly perChannel: boolean;
  /** Nodes (by name) to leave in float. */
  readonly nodesToExclude?: readonly string[];
}

/** FP16 variant of a prepared FP32 model; `opBlockList` replaces the default list of operators kept in FP32. */
export function float16Variant(fp32: OnnxModel, keepIoTypes: boolean, opBlockList?: readonly string[]): OnnxModel {
  return float32ToFloat16(fp32, opBlockList === undefined ? { keepIoTypes } : { keepIoTypes, opBlockList });
}

/** Statically quantized QDQ variant: opset 13, calibrate the activations on the samples, insert QDQ. */
export async function int8Variant(fp32: OnnxModel, settings: Int8Settings): Promise<OnnxModel> {
  const model = upgradeToQdqOpset(fp32);
  const tensors = activationsToCalibrate(model);
  const ranges = await calibrateRanges(model, tensors, settings.samples(), settings.calibration);
  return quantizeQdq(model, ranges, {
    activationType: settings.activationType, perChannel: settings.perChannel, nodesToExclude: settings.nodesToExclude ?? [],
  });
}

/** Dynamically quantized variant (MatMul/Gemm weights INT8, activations quantized per request). */
export function int8DynamicVariant(fp32: OnnxModel): OnnxModel {
  return quantizeDynamic(upgradeToQdqOpset(fp32));
}
