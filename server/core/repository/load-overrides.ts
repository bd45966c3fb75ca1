import { clipped, InferenceError } from "../errors";

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

/**
 * Refuses a name no repository could hold as a model directory (empty, `.`, `..`, a path): without this a load
 * with `file:` overrides would serve such a model, which no route could then address. REST and gRPC alike.
 */
export function refuseModelName(name: string): void {
  if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
    throw new InferenceError("INVALID_ARG", `invalid model name '${clipped(name)}': a model name is one directory name of the model repository (not empty, '.' or '..', no '/')`);
  }
}

/** Files a runtime would load as code whatever the backend: scripts, compiled modules, native libraries. */
const CODE_FILE = /\.(?:[cm]?js|[cm]?ts|node|so(?:\.\d+)*|dylib|dll|py|sh)$/i;

function backendOf(configJson: string | undefined): string {
  try {
    const config = JSON.parse(configJson ?? "{}") as { backend?: unknown; platform?: unknown };
    return typeof config.backend === "string" && config.backend !== "" ? config.backend : typeof config.platform === "string" ? config.platform : "";
  } catch {
    return ""; // An unreadable config fails the load on its own.
  }
}

/**
 * Refuses `file:` overrides that carry model code unless the server allows it (--allow-model-code-upload): code
 * sent to the load API runs on the server, so anyone who reaches that API could run anything. `runsModelCode` says
 * whether the backend (or platform) a config names, `""` when it names none, runs code from the model directory.
 * INVALID_ARG, naming the flag.
 */
export function refuseModelCode(name: string, overrides: LoadOverrides | undefined, allowed: boolean, runsModelCode: (backend: string) => boolean): void {
  if (allowed || overrides === undefined || overrides.files.size === 0) return;
  const backend = backendOf(overrides.config);
  const codeFile = [...overrides.files.keys()].find((key) => CODE_FILE.test(key));
  if (!runsModelCode(backend) && codeFile === undefined) return;
  const what = codeFile !== undefined ? `'${clipped(codeFile)}' is code` : `backend '${clipped(backend)}' runs code from the model directory`;
  throw new InferenceError(
    "INVALID_ARG",
    `load failed for model '${clipped(name)}': file overrides may not carry model code (${what}); start the server with --allow-model-code-upload true to allow it`,
  );
}
