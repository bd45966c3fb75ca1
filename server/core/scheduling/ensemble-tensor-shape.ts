/** Config dims match a shape: same rank, every fixed dimension equal (-1 matches any size). */
function matchesDims(configDims: readonly number[], shape: readonly number[]): boolean {
  return configDims.length === shape.length && configDims.every((dim, i) => dim === -1 || dim === shape[i]);
}

/**
 * The shape an ensemble tensor takes where it enters a step (or leaves as an ensemble output), Triton's
 * `EnsembleContext::ReshapeTensorDims` (core src/ensemble_scheduler/ensemble_scheduler.cc): only when one side
 * batches and the other does not. A tensor without a batch dimension (`tensorBatchSize` 0: from a non-batching
 * ensemble or step) that matches the batching side's dims gains a batch dimension of 1; a tensor of batch size 1
 * that does not match the non-batching side's dims as it is loses its batch dimension. Anything else is passed as
 * it is, for the receiving model's own shape check to judge.
 */
export function ensembleTensorShape(configDims: readonly number[], configBatching: boolean, tensorBatchSize: number, shape: readonly number[]): number[] {
  if (configBatching === (tensorBatchSize !== 0)) return [...shape];
  if (configBatching) return matchesDims(configDims, shape) ? [1, ...shape] : [...shape];
  return !matchesDims(configDims, shape) && tensorBatchSize === 1 ? shape.slice(1) : [...shape];
}
