export { buildExampleRepository, DEFAULT_EXAMPLE_SEED, type BuildExampleRepositoryOptions } from "./build-example-repository";
export { ensureExampleRepository, type EnsureExampleRepositoryResult } from "./ensure-example-repository";
export { OnnxGraphBuilder, type OnnxAttributeValue, type OnnxDim, type OnnxInitializerData, type OnnxModelOptions, type OnnxNodeSpec } from "./onnx-graph-builder";
export { ONNX_ELEMENT_TYPE, type OnnxElementType } from "./onnx-element-type";
export { loadOnnxSchema, type OnnxSchema } from "./onnx-schema";
export { SeededRandom } from "./seeded-random";
export { MLP_FEATURES } from "./models/mlp-model";
export { nopOnnxModel } from "./models/nop-model";
export { accumulatorOnnxModel } from "./models/accumulator-model";
