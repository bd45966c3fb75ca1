export type {
  DataType, ErrorCode, ExecuteContext, ExecuteRequest, ExecuteResponse, InferOptions, InferResult, InitializeArgs, ModelConfigJson, OutputTensor,
  ParameterValue, ResponseSender, Tensor, TensorOfType, TypeScriptModel, TypeScriptModelClass,
} from "./typescript-model";
// FP16 and BF16 tensors travel as their 16-bit patterns; these convert them, under the names models use.
export {
  float16Bits as float32ToFp16, float16Value as fp16ToFloat32, fromFloat16Array as fp16ToFloat32Array, toFloat16Array as float32ToFp16Array,
} from "../../../protocol/float16";
export {
  bfloat16Bits as float32ToBf16, bfloat16Value as bf16ToFloat32, fromBfloat16Array as bf16ToFloat32Array, toBfloat16Array as float32ToBf16Array,
} from "../../../protocol/bfloat16";
export { inputTensor } from "./input-tensor";
export { isModelCallError, ModelCallError } from "./model-call-error";
