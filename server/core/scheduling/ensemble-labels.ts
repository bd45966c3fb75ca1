import type { ModelConfig } from "../model-config/model-config";
import type { ModelSignature, TensorSignature } from "../model-config/model-signature";
import type { ComposingModels } from "./ensemble";

/**
 * An ensemble output without a `label_filename` of its own classifies with the labels of the step output that
 * produces it, as Triton completes an ensemble's label provider when it loads (core
 * src/model_repository_manager/model_lifecycle.cc, after EnsembleModel::Create). Call once the steps are known to
 * be servable (planEnsemble).
 */
export function withStepLabels(config: ModelConfig, signature: ModelSignature, composing: ComposingModels): ModelSignature {
  const outputs = signature.outputs.map((output): TensorSignature => {
    if (output.labels !== undefined) return output;
    for (const step of config.ensemble_scheduling?.step ?? []) {
      const stepOutput = Object.entries(step.output_map).find(([, tensor]) => tensor === output.name)?.[0];
      if (stepOutput === undefined) continue;
      const labels = composing.signatureOf(step.model_name, step.model_version).outputs.find((o) => o.name === stepOutput)?.labels;
      return { ...output, labels };
    }
    return output;
  });
  return { ...signature, outputs };
}
