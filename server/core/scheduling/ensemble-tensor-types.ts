import { dataTypeToConfig, type DataType } from "../../../protocol/datatypes";

/** What an ensemble tensor is inferred to be from one model's config: Triton's `TensorNode`. */
interface TensorNode {
  readonly model: string;
  readonly datatype: DataType;
  readonly dims: readonly number[];
  /** `dims` with the batch dimension (-1) in front when the model batches. */
  readonly fullDims: readonly number[];
}

/** Same rank, and each pair of dimensions equal or either one -1 (Triton's CompareDimsWithWildcard). */
function compatible(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((dim, i) => dim === -1 || b[i] === -1 || dim === b[i]);
}

const shape = (dims: readonly number[]): string => `[${dims.join(",")}]`;

/**
 * The datatype and shape every ensemble tensor is inferred to have, checked for agreement as each model's config
 * names it, with Triton's messages (core src/ensemble_scheduler/ensemble_utils.cc, ValidateTensorConsistency):
 * datatypes must be equal; shapes must agree with or without the batch dimension, so that a tensor may pass
 * between a batching model with dims `[16]` and a non-batching one with dims `[-1,16]`.
 */
export class EnsembleTensorTypes {
  readonly #ensemble: string;
  readonly #nodes = new Map<string, TensorNode>();

  constructor(ensemble: string) {
    this.#ensemble = ensemble;
  }

  /** Records what `model` says tensor `name` is, or throws where that disagrees with what was recorded first. */
  add(name: string, model: string, batching: boolean, datatype: DataType, dims: readonly number[]): void {
    const node: TensorNode = { model, datatype, dims, fullDims: batching ? [-1, ...dims] : dims };
    const earlier = this.#nodes.get(name);
    if (earlier === undefined) {
      this.#nodes.set(name, node);
      return;
    }
    const prefix = `in ensemble ${this.#ensemble}, ensemble tensor ${name}: `;
    if (earlier.datatype !== node.datatype) {
      throw new Error(
        `${prefix}inconsistent data type: ${dataTypeToConfig(earlier.datatype)} is inferred from model ${earlier.model} ` +
        `while ${dataTypeToConfig(node.datatype)} is inferred from model ${node.model}`,
      );
    }
    if (!compatible(earlier.dims, node.dims) && !compatible(earlier.fullDims, node.fullDims)) {
      throw new Error(
        `${prefix}inconsistent shape: ${shape(earlier.fullDims)} is inferred from model ${earlier.model} ` +
        `while ${shape(node.fullDims)} is inferred from model ${node.model}`,
      );
    }
  }
}
