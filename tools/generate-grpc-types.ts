/**
 * Regenerates `protocol/grpc-types/` (`npm run grpc-types`): the gRPC message types @grpc/proto-loader's type
 * generator writes from `protocol/proto`, one folder per set of loader options in protocol/grpc-loader-options.ts.
 * The generator's flags are derived from those objects, so the types cannot describe other options than the
 * server and the client decode with; tests/protocol/grpc-types.test.ts fails when the committed files are stale.
 */
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { GRPC_LOADER_OPTIONS_LONGS_AS_NUMBERS, GRPC_LOADER_OPTIONS_LONGS_AS_STRINGS } from "../protocol/grpc-loader-options";

type LoaderOptions = typeof GRPC_LOADER_OPTIONS_LONGS_AS_STRINGS | typeof GRPC_LOADER_OPTIONS_LONGS_AS_NUMBERS;

/** Each folder's options and protos: the client speaks only GRPCInferenceService, the server health.proto too. */
const TYPE_SETS: readonly { readonly folder: string; readonly options: LoaderOptions; readonly protos: readonly string[] }[] = [
  { folder: "longs-as-strings", options: GRPC_LOADER_OPTIONS_LONGS_AS_STRINGS, protos: ["grpc_service.proto", "health.proto"] },
  { folder: "longs-as-numbers", options: GRPC_LOADER_OPTIONS_LONGS_AS_NUMBERS, protos: ["grpc_service.proto"] },
];

export const REPO_ROOT = path.resolve(__dirname, "..");
export const GRPC_TYPES_DIRECTORY = path.join(REPO_ROOT, "protocol", "grpc-types");

const KNOWN_OPTIONS = new Set(["keepCase", "longs", "enums", "defaults", "oneofs"]);

function generatorFlags(options: LoaderOptions): string[] {
  // An option added to the loader's set but not passed on here would leave the types describing other messages.
  const unknown = Object.keys(options).filter((key) => !KNOWN_OPTIONS.has(key));
  if (unknown.length > 0) throw new Error(`generate-grpc-types does not pass on the loader option(s) ${unknown.join(", ")}`);
  return [
    ...(options.keepCase ? ["--keepCase"] : []),
    `--longs=${options.longs.name}`,
    `--enums=${options.enums.name}`,
    ...(options.defaults ? ["--defaults"] : []),
    ...(options.oneofs ? ["--oneofs"] : []),
  ];
}

/** Writes every set's types under `outDirectory` (which should be empty: the generator removes no stale file). */
export function generateGrpcTypes(outDirectory: string): void {
  const generator = require.resolve("@grpc/proto-loader/build/bin/proto-loader-gen-types.js");
  for (const { folder, options, protos } of TYPE_SETS) {
    // Run from the root with a relative include directory: each file's "Original file" comment names the proto by
    // that path, the same on every machine.
    execFileSync(process.execPath, [
      generator, ...generatorFlags(options), "--includeDirs", path.join("protocol", "proto"), "--outDir", path.join(outDirectory, folder), ...protos,
    ], { cwd: REPO_ROOT, stdio: ["ignore", "ignore", "inherit"] });
  }
}

if (require.main === module) {
  rmSync(GRPC_TYPES_DIRECTORY, { recursive: true, force: true });
  generateGrpcTypes(GRPC_TYPES_DIRECTORY);
}
