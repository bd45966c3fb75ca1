import type { ModelConfig } from "../model-config/model-config";

/** What the repository knows of the models an ensemble depends on. */
export interface DependencyView {
  /** A model of this name is in a repository (or loaded). */
  exists(name: string): boolean;
  /** The step models of `name`'s config; none for a model that is not an ensemble or cannot be read. */
  stepModels(name: string): readonly string[];
  /** The versions of `name` that serve. */
  servingVersions(name: string): readonly number[];
  /** Why `name` failed as a whole, or its first version's failure; undefined when it did not fail. */
  failure(name: string): string | undefined;
}

/** Triton's CircularDependencyCheck: `start -> ... -> current -> start` for the first way back to `start`. */
function circularPath(start: string, current: string, view: DependencyView, seen: Set<string>): string | undefined {
  for (const upstream of view.stepModels(current)) {
    if (upstream === start) return `circular dependency between ensembles: ${start} -> ... -> ${current} -> ${start}`;
    if (seen.has(upstream)) continue;
    seen.add(upstream);
    const found = circularPath(start, upstream, view, seen);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * The checks Triton's dependency graph makes on an ensemble before it validates the steps' configs (core
 * src/model_repository_manager/model_repository_manager.cc: UpdateGraph, CircularDependencyCheck, CheckNodeReady),
 * in its order and words: every step model exists, no ensemble reaches itself, and every step model serves,
 * in the version a step asks for. Undefined when none fails.
 */
export function ensembleDependencyProblem(config: ModelConfig, view: DependencyView): string | undefined {
  const steps = config.ensemble_scheduling?.step ?? [];
  const missing = [...new Set(steps.map((step) => step.model_name).filter((name) => !view.exists(name)))].sort();
  if (missing.length > 0) return `ensemble ${config.name} contains models that are not available or ambiguous: ${missing.join(", ")}`;
  const circular = circularPath(config.name, config.name, view, new Set());
  if (circular !== undefined) return circular;
  for (const step of steps) {
    const versions = view.servingVersions(step.model_name);
    const dependsOn = `ensemble '${config.name}' depends on '${step.model_name}'`;
    if (versions.length === 0) {
      const failure = view.failure(step.model_name);
      return `${dependsOn} which has no loaded version.${failure === undefined ? "" : ` Model '${step.model_name}' loading failed with error: ${failure}`}`;
    }
    if (step.model_version >= 0 && !versions.includes(step.model_version)) return `${dependsOn} whose required version ${step.model_version} is not loaded.`;
  }
  return undefined;
}
