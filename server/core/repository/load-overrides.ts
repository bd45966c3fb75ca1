import { InferenceError } from "../errors";

/**
 * Triton's load overrides (model repository extension): parameters of a load request that change what is
 * loaded, decoded by each frontend from its own encoding (REST: strings, files base64; gRPC: string_param and
 * bytes_param).
 */
export interface LoadOverrides {
  /** `config`: JSON of an `inference.ModelConfig`, used instead of the model's config.pbtxt. */
  readonly config: string | undefined;
  /** `file:<path>` parameters by their full name (e.g. `file:1/model.onnx`), contents as bytes. */
  readonly files: ReadonlyMap<string, Uint8Array>;
}

/** As Triton's frontends: a repository named in a repository request is not supported (one namespace). */
export function refuseRepositoryName(repositoryName: string): void {
  if (repositoryName !== "") throw new InferenceError("UNSUPPORTED", "'repository_name' specification is not supported");
}
