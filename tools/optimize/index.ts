/** inference-optimize's public surface: the passes and the tool, for tests, bench/ and other tools. Everything else is internal. */
export { compareOutputs, firstOutputs, type AccuracySummary } from "./accuracy";
export { calibrateRanges, type CalibrationMethod, type CalibrationOptions, type CalibrationSample } from "./calibrate";
export { imageTensor, loadSamples, modelInputs, type ImagePreprocess } from "./calibration-data";
export { quantizeDynamic } from "./dynamic-quantizer";
export { float16ToFloat32 } from "./float16-to-float32";
export { DEFAULT_FP16_OP_BLOCK_LIST, float32ToFloat16, type Float16Options } from "./float32-to-float16";
export { foldBatchNormIntoConv } from "./fold-batch-norm";
export { decodeOnnxModel, encodeOnnxModel, type OnnxModel } from "./onnx-model";
export { OptimizeError } from "./optimize-error";
export { float16Variant, int8DynamicVariant, int8Variant, prepareFloat32, type Precision } from "./optimize-model";
export { parseOptimizeOptions, type OptimizeOptions } from "./optimize-options";
export { activationsToCalibrate, quantizeQdq, type ActivationRange, type QdqOptions } from "./qdq-quantizer";
export { runInferenceOptimize, type OptimizeOutput } from "./run-inference-optimize";
export { upgradeToQdqOpset } from "./upgrade-opset";
