import type { ModelIndexEntry } from "../core/index";
import type { EnsembleStep } from "./server-metrics";

/** The part of the core {@link loadedEnsembleSteps} reads. */
export interface ModelConfigSource {
  repositoryIndex(readyOnly: boolean): readonly ModelIndexEntry[];
  modelConfig(name: string, version?: string): Record<string, unknown>;
}

/** Every step of every ready ensemble, from the `ensemble_scheduling.step` of its configuration. */
export function loadedEnsembleSteps(core: ModelConfigSource): EnsembleStep[] {
  return core.repositoryIndex(true).flatMap((entry) => {
    const scheduling = core.modelConfig(entry.name, entry.version || undefined)["ensemble_scheduling"] as { step?: readonly { model_name?: unknown }[] } | undefined;
    return (scheduling?.step ?? []).map((step) => ({ ensemble: entry.name, model: String(step.model_name) }));
  });
}
