export type {
  DataType, ErrorCode, ExecuteRequest, ExecuteResponse, InitializeArgs, ModelConfigJson, OutputTensor, ParameterValue, Tensor,
  TensorOfType, TypeScriptModel, TypeScriptModelClass,
} from "./typescript-model";
export {
  bf16ToFloat32, bf16ToFloat32Array, float32ToBf16, float32ToBf16Array, float32ToFp16, float32ToFp16Array, fp16ToFloat32,
  fp16ToFloat32Array,
} from "../../half-precision";
export { inputTensor } from "./input-tensor";
