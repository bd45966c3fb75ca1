import type { DataType, ExecuteRequest, TensorOfType } from "./typescript-model";

/**
 * The request's input `name`, typed as `datatype`. Throws when the request lacks it (an optional input left out)
 * or it has another datatype (the config and the model disagree): a model bug, which fails the batch.
 */
export function inputTensor<D extends DataType>(request: ExecuteRequest, name: string, datatype: D): TensorOfType<D> {
  const tensor = request.inputs[name];
  if (tensor === undefined) throw new Error(`the request has no input '${name}'`);
  if (tensor.datatype !== datatype) throw new Error(`input '${name}' is ${tensor.datatype}, not ${datatype}`);
  return tensor as TensorOfType<D>;
}
