import * as pulumi from "@pulumi/pulumi";
import { definedEntries, parseStackConfig, rawStackConfigKeys, type RawStackConfig, type StackConfig } from "./stack-config";

// Keys whose stack-file value is a string; every other key is a number or an object, read as JSON.
const stringKeys: readonly (keyof RawStackConfig)[] = ["environment", "namePrefix", "domain"];
const structuredKeys = rawStackConfigKeys.filter((key) => key !== "project" && !stringKeys.includes(key));

/**
 * Reads the stack's configuration: the only place in the program that touches `pulumi.Config`.
 *
 * @throws StackConfigError naming every `<project>:<key>` to fix, before any resource is declared.
 */
export function loadConfig(): StackConfig {
  const config = new pulumi.Config();
  const raw: Record<string, unknown> = { project: new pulumi.Config("gcp").get("project") };
  for (const key of stringKeys) raw[key] = config.get(key);
  for (const key of structuredKeys) raw[key] = config.getObject<unknown>(key);
  const parsed = parseStackConfig(raw, { stack: pulumi.getStack(), namespace: pulumi.getProject() });
  const secrets = {
    grafanaAdminPassword: config.getSecret("grafanaAdminPassword"),
    adminKey: config.getSecret("adminKey"),
    alertmanagerConfig: config.getSecret("alertmanagerConfig"),
  };
  return { ...parsed, ...definedEntries(secrets) };
}
