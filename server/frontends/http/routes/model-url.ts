import { InferenceError } from "../../../core/index";

/** The path parameters of a model's routes. */
export interface ModelParams {
  readonly model: string;
  readonly version?: string;
}

/** A model route's two paths, as Triton routes them: the model's, and one of its versions'. */
export function modelUrls(suffix: string): readonly string[] {
  return [`/v2/models/:model${suffix}`, `/v2/models/:model/versions/:version${suffix}`];
}

export function versionOf(params: ModelParams): string | undefined {
  const version = params.version;
  if (version !== undefined && !/^[0-9]+$/.test(version)) {
    throw new InferenceError("INVALID_ARG", `model version '${version}' is not a number: versions in the URL are numeric`);
  }
  return version;
}
