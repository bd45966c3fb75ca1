/**
 * A tensor's shape under a config `reshape`, Triton's rule in both directions (core src/infer_request.cc for
 * inputs: `dims` -> `reshape.shape`; src/infer_response.cc, `InferenceResponse::Output::Reshape`, for outputs:
 * `reshape.shape` -> `dims`): the sizes at the -1 positions of `fromDims` fill the -1 positions of `toDims`, in
 * order; every other dimension is `toDims`' own. Shapes are without the batch dimension.
 */
export function reshapeShape(fromDims: readonly number[], shape: readonly number[], toDims: readonly number[]): number[] {
  const variable = fromDims.flatMap((dim, i) => (dim === -1 ? [shape[i]!] : []));
  return toDims.map((dim) => (dim === -1 ? (variable.shift() ?? -1) : dim));
}

/** `reshapeShape` on a whole tensor's shape, which has a leading batch dimension when `batching`. */
export function reshapeBatchedShape(batching: boolean, fromDims: readonly number[], shape: readonly number[], toDims: readonly number[]): number[] {
  const batch = batching ? shape.slice(0, 1) : [];
  return [...batch, ...reshapeShape(fromDims, shape.slice(batch.length), toDims)];
}
