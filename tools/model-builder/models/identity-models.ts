import { DATATYPES, dataTypeToConfig, type DataType } from "../../../protocol/datatypes";
import { exampleModel, ONNX_MODEL_FILE_NAME, type ExampleModel } from "../example-model";
import { type ModelConfigSpec } from "../model-config-text";
import { ONNX_ELEMENT_TYPE } from "../onnx-element-type";
import { OnnxGraphBuilder } from "../onnx-graph-builder";

const MAX_BATCH_SIZE = 8;

// onnxruntime-node cannot create bfloat16 tensors, so BF16 is served by the server's TypeScript backend.
const TYPESCRIPT_BACKEND_DATATYPES: ReadonlySet<DataType> = new Set(["BF16"]);

function identityConfig(dataType: DataType, runtime: ModelConfigSpec["runtime"]): ModelConfigSpec {
  const tensor = { dataType: dataTypeToConfig(dataType), dims: [-1] };
  return {
    name: `identity_${dataType.toLowerCase()}`,
    runtime,
    maxBatchSize: MAX_BATCH_SIZE,
    inputs: [{ name: "INPUT0", ...tensor }],
    outputs: [{ name: "OUTPUT0", ...tensor }],
  };
}

function onnxIdentityModel(dataType: DataType): ExampleModel {
  const config = identityConfig(dataType, { platform: "onnxruntime_onnx" });
  const elementType = ONNX_ELEMENT_TYPE[dataType];
  const shape = ["N", "length"];
  const graph = new OnnxGraphBuilder(config.name);
  const input = graph.addInput("INPUT0", elementType, shape);
  graph.addNode({ opType: "Identity", inputs: [input], outputs: ["OUTPUT0"] });
  graph.addOutput("OUTPUT0", elementType, shape);
  return exampleModel(config, { [ONNX_MODEL_FILE_NAME]: graph.toModelBytes() });
}

function backendIdentityModel(dataType: DataType): ExampleModel {
  // Triton (and our repository loader) only serves versions that exist as numeric directories.
  return exampleModel(identityConfig(dataType, { backend: "identity" }), { ".keep": "" });
}

/**
 * `identity_<datatype>` for every KServe datatype: OUTPUT0 returns INPUT0 unchanged, any shape [-1] per
 * request, batched up to 8. ONNX `Identity` models except BF16, which uses the built-in `identity` backend.
 */
export function buildIdentityModels(): ExampleModel[] {
  return DATATYPES.map((dataType) =>
    TYPESCRIPT_BACKEND_DATATYPES.has(dataType) ? backendIdentityModel(dataType) : onnxIdentityModel(dataType),
  );
}
