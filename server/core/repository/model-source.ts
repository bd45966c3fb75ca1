import type { LoadOverrides } from "./load-overrides";
import type { ModelConfig } from "../model-config/model-config";
import { modelConfigFromJson, parseModelConfigText } from "../model-config/parse";
import { validateModelConfig } from "../model-config/validate";
import { validateModelIoConfig } from "../model-config/validate-io";
import { type ModelDirectory, readConfigText } from "./model-repository";
import { OverrideDirectory } from "./override-directory";

/**
 * What a load reads a model from, once Triton's "poll" step has passed: the model directory and its config,
 * read and named. A failure before this point fails the poll; anything later fails the load.
 */
export interface ModelSource {
  readonly directory: ModelDirectory;
  readonly config: ModelConfig;
  /** Set when the directory holds a load's `file:` overrides, which the core removes once nothing uses them. */
  readonly overrides: OverrideDirectory | undefined;
}

/**
 * The end of Triton's poll of a model (core src/model_repository_manager/, InitializeModelInfo): the config's own
 * checks (its inputs and outputs too when auto-complete is off, as nothing will complete them), then its name, which
 * must be its directory's (an empty name takes it). So a config error is reported before anything looks for
 * version directories, and as a failure of the poll.
 */
function polled(config: ModelConfig, name: string, autoCompleteConfig: boolean): ModelConfig {
  if (config.name === "") config.name = name;
  validateModelConfig(config);
  if (!autoCompleteConfig) validateModelIoConfig(config);
  if (config.name !== name) {
    throw new Error(`unexpected directory name '${name}' for model '${config.name}', directory name must equal model name`);
  }
  return config;
}

/** The load API's `config` parameter: JSON of an `inference.ModelConfig`, replacing config.pbtxt. */
function configOverride(json: string): ModelConfig {
  try {
    return modelConfigFromJson(JSON.parse(json), "inference.ModelConfig");
  } catch (error) {
    throw new Error(`Invalid config override: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * A repository model: its config.pbtxt (or an empty config for auto-complete to fill, unless that is off), or
 * a `config` override in its place. Throws an Error with the reason the poll failed.
 */
export function repositorySource(directory: ModelDirectory, autoCompleteConfig: boolean, configJson?: string): ModelSource {
  if (configJson !== undefined) return { directory, config: polled(configOverride(configJson), directory.name, autoCompleteConfig), overrides: undefined };
  const text = readConfigText(directory);
  if (text === undefined && !autoCompleteConfig) {
    throw new Error("config.pbtxt is missing and auto-complete is disabled (--disable-auto-complete-config)");
  }
  const config = parseModelConfigText(text ?? "", `model '${directory.name}': config.pbtxt`);
  return { directory, config: polled(config, directory.name, autoCompleteConfig), overrides: undefined };
}

/**
 * A model made of `file:` overrides alone, as Triton builds it: the repository is not consulted, and the
 * `config` override is required. Throws an Error with Triton's reason; writes nothing when it throws.
 */
export async function overrideSource(name: string, overrides: LoadOverrides, autoCompleteConfig: boolean): Promise<ModelSource> {
  if (overrides.config === undefined) throw new Error("Load parameter 'config' must be specified for model file override");
  const config = polled(configOverride(overrides.config), name, autoCompleteConfig);
  const directory = await OverrideDirectory.create(name, overrides.files);
  return { directory: directory.directory, config, overrides: directory };
}
