import type { ModelConfig, ModelSequenceBatching, SequenceControl, SequenceControlKind } from "./model-config";

const BOOLEAN_KINDS: readonly SequenceControlKind[] = ["CONTROL_SEQUENCE_START", "CONTROL_SEQUENCE_END", "CONTROL_SEQUENCE_READY"];
const CORRID_DATATYPES: ReadonlySet<string> = new Set(["TYPE_UINT64", "TYPE_INT64", "TYPE_UINT32", "TYPE_INT32", "TYPE_STRING"]);

/**
 * The one control of `kind`, as Triton's Get*SequenceControlProperties find it: every control tensor named, no
 * tensor listed twice, at most one control of the kind. Undefined when there is none (none is required).
 */
function controlOf(batcher: ModelSequenceBatching, kind: SequenceControlKind, modelName: string): SequenceControl | undefined {
  const seen = new Set<string>();
  let found: SequenceControl | undefined;
  for (const input of batcher.control_input) {
    if (input.name === "") throw new Error(`sequence batching control tensor must have a name for ${modelName}`);
    if (seen.has(input.name)) throw new Error(`sequence batching control tensor '${input.name}' is specified for multiple control kinds for ${modelName}`);
    seen.add(input.name);
    for (const control of input.control.filter((c) => c.kind === kind)) {
      if (found !== undefined) throw new Error(`sequence batching specifies multiple ${kind} tensors for ${modelName}`);
      found = control;
    }
  }
  return found;
}

/** Triton's GetBooleanSequenceControlProperties checks of one START, END or READY control. */
function checkBooleanControl(control: SequenceControl, kind: SequenceControlKind, modelName: string): void {
  const lists = [["int32_false_true", control.int32_false_true], ["fp32_false_true", control.fp32_false_true], ["bool_false_true", control.bool_false_true]] as const;
  const given = lists.filter(([, values]) => values.length > 0);
  const suffix = `for ${kind} for ${modelName}`;
  if (given.length === 0) throw new Error(`sequence batching must specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' ${suffix}`);
  if (given.length > 1) throw new Error(`sequence batching specifies more than one from 'int32_false_true', 'fp32_false_true' and 'bool_false_true' ${suffix}`);
  const [field, values] = given[0]!;
  if (values.length !== 2) throw new Error(`sequence batching control '${field}' must have exactly 2 entries ${suffix}`);
}

/**
 * Triton's checks of `sequence_batching.control_input` (core src/model_config_utils.cc, ValidateModelConfig with
 * GetBooleanSequenceControlProperties and GetTypedSequenceControlProperties), with its messages.
 */
export function validateSequenceControls(config: ModelConfig, batcher: ModelSequenceBatching): void {
  for (const kind of BOOLEAN_KINDS) {
    const control = controlOf(batcher, kind, config.name);
    if (control !== undefined) checkBooleanControl(control, kind, config.name);
  }
  const corrid = controlOf(batcher, "CONTROL_SEQUENCE_CORRID", config.name);
  if (corrid === undefined) return;
  if (corrid.int32_false_true.length > 0 || corrid.fp32_false_true.length > 0 || corrid.bool_false_true.length > 0) {
    throw new Error(`sequence batching must not specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for CONTROL_SEQUENCE_CORRID for ${config.name}`);
  }
  if (!CORRID_DATATYPES.has(corrid.data_type)) {
    throw new Error(
      `unexpected data type for control CONTROL_SEQUENCE_CORRID for ${config.name}. Allowed data types are TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING`,
    );
  }
}
