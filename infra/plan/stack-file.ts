import fs from "node:fs";
import path from "node:path";
import { load as loadYaml } from "js-yaml";

/** A stack's configuration as `pulumi config` would hand it to the program. */
export interface StackFileConfig {
  /** Pulumi project name (Pulumi.yaml `name`). */
  readonly project: string;
  /** `"<namespace>:<key>"` to the value; structured values as JSON, which is how Pulumi passes them. */
  readonly config: Record<string, string>;
  /** Keys whose stack-file value is encrypted (`secure:`). */
  readonly secretKeys: string[];
}

/** Stands in for an encrypted value, which cannot be decrypted without the stack's secrets provider. */
export const SECRET_PLACEHOLDER = "offline-plan-placeholder-secret";

function readYamlObject(file: string): Record<string, unknown> {
  if (!fs.existsSync(file)) throw new Error(`${file} does not exist`);
  const parsed: unknown = loadYaml(fs.readFileSync(file, "utf8"));
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error(`${file} is not a YAML mapping`);
  return parsed as Record<string, unknown>;
}

function isSecureValue(value: unknown): boolean {
  return typeof value === "object" && value !== null && Object.keys(value).length === 1 && "secure" in value;
}

/**
 * Reads `Pulumi.yaml` and `Pulumi.<stack>.yaml` under `projectRoot`, the way the Pulumi CLI would, without
 * the CLI: encrypted values become {@link SECRET_PLACEHOLDER} (and stay marked secret).
 */
export function readStackFile(projectRoot: string, stack: string): StackFileConfig {
  const project = readYamlObject(path.join(projectRoot, "Pulumi.yaml"))["name"];
  if (typeof project !== "string") throw new Error(`${path.join(projectRoot, "Pulumi.yaml")} has no project name`);
  const stackFile = path.join(projectRoot, `Pulumi.${stack}.yaml`);
  const entries = readYamlObject(stackFile)["config"] ?? {};
  if (typeof entries !== "object" || entries === null) throw new Error(`${stackFile}: 'config' must be a mapping`);
  const config: Record<string, string> = {};
  const secretKeys: string[] = [];
  for (const [key, value] of Object.entries(entries)) {
    // Keys without a namespace belong to the project, as in the CLI.
    const fullKey = key.includes(":") ? key : `${project}:${key}`;
    if (isSecureValue(value)) {
      config[fullKey] = SECRET_PLACEHOLDER;
      secretKeys.push(fullKey);
    } else {
      config[fullKey] = typeof value === "string" ? value : JSON.stringify(value);
    }
  }
  return { project, config, secretKeys };
}
