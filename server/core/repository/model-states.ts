import { clipped, InferenceError, invalidArg } from "../errors";
import type { ModelIndexEntry, ModelVersion } from "./model-version";

/** What a model's last load left: why it failed as a whole, or what each of its versions became. */
export interface ModelEntry {
  /** Set when the model as a whole failed (bad config, unknown backend...). */
  readonly failure: string | undefined;
  readonly versions: ReadonlyMap<number, ModelVersion | Error>;
}

/** The repository index rows of one model (`entry` undefined: in a repository, not loaded). */
export function indexRows(name: string, entry: ModelEntry | undefined, readyOnly: boolean): ModelIndexEntry[] {
  if (entry === undefined || entry.failure !== undefined) {
    return readyOnly ? [] : [{ name, state: "UNAVAILABLE", reason: entry?.failure ?? "unloaded" }];
  }
  const rows: ModelIndexEntry[] = [];
  for (const [version, loaded] of entry.versions) {
    const ready = !(loaded instanceof Error);
    if (readyOnly && !ready) continue;
    rows.push({ name, version: String(version), state: ready ? "READY" : "UNAVAILABLE", reason: ready ? "" : loaded.message });
  }
  return rows;
}

/**
 * The loaded version of model `name` (`entry` undefined: not loaded) that serves `version` (undefined or empty:
 * the latest that serves): NOT_FOUND for unknown ones, UNAVAILABLE for ones that failed, with Triton's messages.
 */
export function resolveVersion(name: string, entry: ModelEntry | undefined, version: string | undefined): ModelVersion {
  if (entry === undefined) throw new InferenceError("NOT_FOUND", `Request for unknown model: '${clipped(name)}' is not found`);
  if (entry.failure !== undefined) throw new InferenceError("UNAVAILABLE", `Request for unknown model: '${clipped(name)}' is not ready: ${entry.failure}`);
  if (version === undefined || version === "") {
    const ready = [...entry.versions.values()].filter((v): v is ModelVersion => !(v instanceof Error));
    const latest = ready.sort((a, b) => b.version - a.version)[0];
    if (latest === undefined) {
      const reasons = [...entry.versions].flatMap(([number, v]) => (v instanceof Error ? [`version ${number}: ${v.message}`] : []));
      throw new InferenceError("UNAVAILABLE", `Request for unknown model: '${clipped(name)}' has no available versions${reasons.length > 0 ? ` (${reasons.join("; ")})` : ""}`);
    }
    return latest;
  }
  if (!/^[0-9]+$/.test(version)) throw invalidArg(`failed to parse model version '${clipped(version)}' for model '${clipped(name)}': versions are non-negative integers`);
  const loaded = entry.versions.get(Number(version));
  if (loaded === undefined) throw new InferenceError("NOT_FOUND", `Request for unknown model: '${clipped(name)}' version ${clipped(version)} is not found`);
  // Triton's words (core src/model_repository_manager/model_lifecycle.cc, GetModel), the reason appended.
  if (loaded instanceof Error) throw new InferenceError("UNAVAILABLE", `Request for unknown model: '${clipped(name)}' version ${clipped(version)} is not at ready state: ${loaded.message}`);
  return loaded;
}
