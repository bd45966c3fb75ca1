import type { ModelVersion } from "./model-version";
import type { OverrideDirectory } from "./override-directory";

/** The directories loads with `file:` overrides wrote, each kept while a loaded version comes from it. */
export class OverrideDirectories {
  readonly #byModel = new Map<string, Set<OverrideDirectory>>();
  readonly #ofVersion = new WeakMap<ModelVersion, OverrideDirectory>();

  add(name: string, directory: OverrideDirectory): void {
    this.#byModel.set(name, (this.#byModel.get(name) ?? new Set()).add(directory));
  }

  /** Records that `version` was loaded from `directory`. */
  loaded(version: ModelVersion, directory: OverrideDirectory): void {
    this.#ofVersion.set(version, directory);
  }

  get models(): string[] {
    return [...this.#byModel.keys()];
  }

  /** Removes the directories of `name` that none of `serving` (its loaded versions) comes from any more. */
  async removeUnused(name: string, serving: readonly ModelVersion[]): Promise<void> {
    const directories = this.#byModel.get(name);
    if (directories === undefined) return;
    const inUse = new Set(serving.map((version) => this.#ofVersion.get(version)));
    for (const directory of directories) {
      if (inUse.has(directory)) continue;
      directories.delete(directory);
      await directory.remove();
    }
    if (directories.size === 0) this.#byModel.delete(name);
  }
}
