import type { ModelConfig } from "../model-config/model-config";
import { ensembleDependencies } from "../scheduling/ensemble";
import { ENSEMBLE_PLATFORM } from "../model-config/validate-ensemble";

/** The models an ensemble's steps run on; none for any other model. */
export function stepModelsOf(config: ModelConfig): string[] {
  return config.platform === ENSEMBLE_PLATFORM ? ensembleDependencies(config) : [];
}

/** The loaded models, as unloading with dependents sees them. */
export interface LoadedModels {
  readonly names: readonly string[];
  /** Models loaded because they were asked for, not as an ensemble's step. */
  readonly explicitlyLoaded: ReadonlySet<string>;
  /** A loaded model's step models (none for one that is not an ensemble). */
  stepModels(name: string): readonly string[];
}

/** `name`, then each step model (at any depth) that goes with it: not asked for, and used by no other ensemble. */
export function withDependents(name: string, loaded: LoadedModels): string[] {
  const unloading = [name];
  for (let i = 0; i < unloading.length; i++) {
    for (const step of loaded.stepModels(unloading[i]!)) {
      if (unloading.includes(step) || loaded.explicitlyLoaded.has(step) || !loaded.names.includes(step)) continue;
      const usedElsewhere = loaded.names.some((other) => !unloading.includes(other) && loaded.stepModels(other).includes(step));
      if (!usedElsewhere) unloading.push(step);
    }
  }
  return unloading;
}

/**
 * The loaded ensembles that lose a step when `unloaded` go, at any depth (an ensemble of ensembles follows), each
 * with the step it lost: Triton re-checks an unloaded model's dependents and unloads them (core
 * src/model_repository_manager/model_repository_manager.cc, CheckNode).
 */
export function ensemblesMissingSteps(unloaded: readonly string[], loaded: LoadedModels): { name: string; missing: string }[] {
  const gone = [...unloaded];
  const missingSteps: { name: string; missing: string }[] = [];
  for (let i = 0; i < gone.length; i++) {
    for (const name of loaded.names) {
      if (gone.includes(name) || !loaded.stepModels(name).includes(gone[i]!)) continue;
      missingSteps.push({ name, missing: gone[i]! });
      gone.push(name);
    }
  }
  return missingSteps;
}
