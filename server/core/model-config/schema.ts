import { existsSync } from "node:fs";
import path from "node:path";
import { Root, type Type } from "protobufjs";

/** The loaded `inference` schema of `protocol/proto/model_config.proto`. */
export interface ModelConfigSchema {
  /** Folder holding our `.proto` files; the include path for protos that `import "model_config.proto"`. */
  readonly protoDirectory: string;
  /** Absolute path of `model_config.proto`. */
  readonly protoPath: string;
  /** `inference.ModelConfig`, loaded with proto field names (snake_case) kept. */
  readonly modelConfigType: Type;
}

const PROTO_RELATIVE_DIRECTORY = path.join("protocol", "proto");
const PROTO_FILE_NAME = "model_config.proto";

let loadedSchema: ModelConfigSchema | undefined;

/**
 * Loads `model_config.proto` once per process and returns the cached schema. The file is found by walking
 * up from this module to the package root, because the build copies no `.proto` files: the same lookup
 * works from `server/core/` (tsx, vitest) and from `dist/server/core/` (compiled). Throws when the
 * package root or the file cannot be found, or when the file does not parse.
 */
export function modelConfigSchema(): ModelConfigSchema {
  if (loadedSchema === undefined) {
    const protoDirectory = path.join(findPackageRoot(__dirname), PROTO_RELATIVE_DIRECTORY);
    const protoPath = path.join(protoDirectory, PROTO_FILE_NAME);
    const root = new Root().loadSync(protoPath, { keepCase: true });
    root.resolveAll();
    loadedSchema = { protoDirectory, protoPath, modelConfigType: root.lookupType("inference.ModelConfig") };
  }
  return loadedSchema;
}

function findPackageRoot(startDirectory: string): string {
  for (let directory = startDirectory; ; directory = path.dirname(directory)) {
    if (existsSync(path.join(directory, "package.json"))) return directory;
    if (path.dirname(directory) === directory) {
      throw new Error(`cannot find the package root (a folder with package.json) above ${startDirectory}`);
    }
  }
}
