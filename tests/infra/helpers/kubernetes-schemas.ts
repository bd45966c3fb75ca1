import { PodMonitor, PrometheusRule, ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { Job } from "kubernetes-models/batch/v1";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from "kubernetes-models/v1";
import { type DeclaredResource } from "../../../infra/plan/recording-mocks";

/**
 * Validates rendered Kubernetes objects against the official schemas: the Kubernetes OpenAPI definitions
 * (kubernetes-models) and the prometheus-operator CRDs' openAPIV3Schema (@kubernetes-models/prometheus-operator),
 * both compiled to validators by their maintainers from the upstream specs.
 *
 * Those validators accept unknown fields (the published schemas do not say `additionalProperties: false`), and
 * an API server running server-side apply with field validation `Strict` refuses them. So each object is
 * validated through a proxy that records which properties the validator looked at: a structured object's
 * validator looks up every property its schema defines (present or not), so a key it never looked up is one the
 * schema does not know. Objects the validator never looks into (free-form maps, `x-kubernetes-preserve-unknown-fields`)
 * are not judged.
 */

interface ModelClass {
  readonly apiVersion: string;
  readonly kind: string;
  readonly prototype: { validate(): void };
}

// Every kind the program renders. A kind missing here fails validation, so a new kind cannot skip the check.
const MODELS: readonly ModelClass[] = [
  Namespace, ServiceAccount, Secret, ConfigMap, Service, Deployment, Job, PodDisruptionBudget, HorizontalPodAutoscaler, NetworkPolicy,
  ServiceMonitor, PodMonitor, PrometheusRule,
];
const modelsByType = new Map(MODELS.map((model) => [`${model.apiVersion}/${model.kind}`, model]));

/** A Kubernetes object as the API server would receive it. */
export interface KubernetesObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly [field: string]: unknown;
}

/** The Kubernetes object a declared resource applies, or undefined for resources that are not one (providers, Helm releases). */
export function kubernetesObjectOf(resource: DeclaredResource): KubernetesObject | undefined {
  const match = /^kubernetes:([^:]+)\/([^/:]+):(\w+)$/.exec(resource.type);
  if (match === null || resource.type.startsWith("kubernetes:helm.sh/")) return undefined;
  const [, group, version, kind] = match as unknown as [string, string, string, string];
  return { apiVersion: group === "core" ? version : `${group}/${version}`, kind, ...resource.inputs };
}

/** Records, per object, every property a validator reads or tests for. */
class ReadRecorder {
  readonly #reads = new WeakMap<object, Set<string>>();
  readonly #proxies = new WeakMap<object, object>();

  wrap<T>(value: T): T {
    if (typeof value !== "object" || value === null) return value;
    const target = value as object;
    const existing = this.#proxies.get(target);
    if (existing !== undefined) return existing as T;
    const reads = new Set<string>();
    this.#reads.set(target, reads);
    const proxy = new Proxy(target, {
      get: (object, key, receiver) => {
        if (typeof key === "string") reads.add(key);
        return this.wrap(Reflect.get(object, key, receiver) as unknown);
      },
      has: (object, key) => {
        if (typeof key === "string") reads.add(key);
        return Reflect.has(object, key);
      },
    });
    this.#proxies.set(target, proxy);
    return proxy as T;
  }

  /** Paths of keys the validator never looked at, in objects it did look into. */
  unreadKeys(value: unknown, path: string): string[] {
    if (typeof value !== "object" || value === null) return [];
    if (Array.isArray(value)) return value.flatMap((item, index) => this.unreadKeys(item, `${path}/${index}`));
    const reads = this.#reads.get(value) ?? new Set<string>();
    return Object.entries(value).flatMap(([key, child]) => {
      if (reads.size === 0) return [];
      if (!reads.has(key)) return [`${path}/${key}`];
      return this.unreadKeys(child, `${path}/${key}`);
    });
  }
}

/**
 * Every problem the API server's schema validation would report for `object`, strictly: type and enum errors,
 * missing required fields, and unknown fields. Empty when the object is valid.
 */
export function schemaProblems(object: KubernetesObject): string[] {
  const model = modelsByType.get(`${object.apiVersion}/${object.kind}`);
  if (model === undefined) return [`no schema registered for ${object.apiVersion} ${object.kind} (add its model to tests/infra/helpers/kubernetes-schemas.ts)`];
  const recorder = new ReadRecorder();
  const problems: string[] = [];
  try {
    model.prototype.validate.call(recorder.wrap(object));
  } catch (error) {
    problems.push(...(error instanceof Error ? error.message : String(error)).split(", ").map((message) => message.trim()));
  }
  problems.push(...recorder.unreadKeys(object, "").map((path) => `unknown field ${path}`));
  return problems;
}
