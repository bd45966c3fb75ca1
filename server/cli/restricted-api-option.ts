import { readFileSync } from "node:fs";
import { InvalidArgumentError } from "@commander-js/extra-typings";
import { API_GROUPS, type ApiGroup, type ApiRestriction, type ApiRestrictions, isApiGroup } from "../frontends/api-restrictions";

/** Where `env:` and `file:` values are read from; the process's own by default. */
export interface SecretSources {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly readFile: (path: string) => string;
}

const PROCESS_SOURCES: SecretSources = { env: process.env, readFile: (path) => readFileSync(path, "utf8") };

/** RFC 9110 token characters; gRPC metadata keys are the lower-case subset of them (plus '.', '_'). */
const HEADER_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;
/** Visible ASCII and inner spaces: what an HTTP header value and gRPC ASCII metadata can both carry unchanged. */
const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * The value of a restriction: literal, or `env:NAME` (an environment variable) or `file:PATH` (a file's trimmed
 * contents, e.g. a mounted Kubernetes Secret), read once here at start-up. Errors name the source, never the value.
 */
function resolveValue(flag: string, raw: string, sources: SecretSources): string {
  let value = raw;
  if (raw.startsWith("env:")) {
    const name = raw.slice("env:".length);
    value = sources.env[name] ?? "";
    if (value === "") throw new InvalidArgumentError(`${flag}: environment variable ${name} (named by 'env:${name}') is not set or is empty`);
  } else if (raw.startsWith("file:")) {
    const path = raw.slice("file:".length);
    try {
      value = sources.readFile(path).trim();
    } catch (error) {
      throw new InvalidArgumentError(`${flag}: cannot read the value from file '${path}': ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    if (value === "") throw new InvalidArgumentError(`${flag}: file '${path}' is empty`);
  }
  if (!HEADER_VALUE.test(value)) {
    throw new InvalidArgumentError(`${flag}: the value must be printable ASCII without leading or trailing spaces (it travels in a header)`);
  }
  return value;
}

/**
 * Triton's `--http-restricted-api` / `--grpc-restricted-protocol`: each entry is `<group>[,<group>...]:<key>=<value>`,
 * and a group may appear in one entry only. The key is the HTTP header (gRPC prefixes `triton-grpc-protocol-`).
 */
export function parseApiRestrictions(flag: string, entries: readonly string[], sources: SecretSources = PROCESS_SOURCES): ApiRestrictions {
  const restrictions = new Map<ApiGroup, ApiRestriction>();
  for (const entry of entries) {
    const colon = entry.indexOf(":");
    const equals = entry.indexOf("=", colon + 1);
    if (colon <= 0 || equals < 0) throw new InvalidArgumentError(`${flag} '${entry.slice(0, colon + 1)}...' is not <api-groups>:<header>=<value>`);
    const header = entry.slice(colon + 1, equals).trim().toLowerCase();
    if (!HEADER_NAME.test(header)) throw new InvalidArgumentError(`${flag}: '${header}' is not a valid header name`);
    const restriction = { header, value: resolveValue(flag, entry.slice(equals + 1), sources) };
    for (const group of entry.slice(0, colon).split(",").map((g) => g.trim())) {
      if (!isApiGroup(group)) throw new InvalidArgumentError(`${flag}: unknown API group '${group}' (groups: ${API_GROUPS.join(", ")})`);
      if (restrictions.has(group)) throw new InvalidArgumentError(`${flag}: API group '${group}' can not be specified in multiple config groups`);
      restrictions.set(group, restriction);
    }
  }
  return restrictions;
}
