import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";

/** A namespace's pods, or a namespace, chosen by labels (`kubernetes.io/metadata.name` is set on every namespace). */
export function podsIn(namespace: string, podLabels?: Record<string, string>): k8s.types.input.networking.v1.NetworkPolicyPeer {
  return {
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
    ...(podLabels === undefined ? {} : { podSelector: { matchLabels: podLabels } }),
  };
}

/** Every source in the CIDR blocks. */
export function addressesIn(cidrs: readonly string[]): k8s.types.input.networking.v1.NetworkPolicyPeer[] {
  return cidrs.map((cidr) => ({ ipBlock: { cidr } }));
}

/** TCP ports, as NetworkPolicy port entries. */
export function tcp(...ports: readonly number[]): k8s.types.input.networking.v1.NetworkPolicyPort[] {
  return ports.map((port) => ({ protocol: "TCP", port }));
}

/**
 * Refuses all ingress to every pod of `namespace` that no other policy admits. Dataplane V2 enforces
 * NetworkPolicy; `kubectl port-forward` and the kubelet's probes do not cross it (they reach the pod from its
 * own node), which is how operators reach Grafana and Prometheus.
 */
export function denyAllIngress(name: string, namespace: string, opts: pulumi.CustomResourceOptions): k8s.networking.v1.NetworkPolicy {
  return new k8s.networking.v1.NetworkPolicy(name, {
    metadata: { name: "deny-all-ingress", namespace },
    spec: { podSelector: {}, policyTypes: ["Ingress"] },
  }, opts);
}

/** Admits `rules` to the pods with `podLabels` in `namespace` (ingress only). */
export function allowIngress(
  name: string,
  metadata: { readonly name: string; readonly namespace: string },
  podLabels: Record<string, string>,
  rules: k8s.types.input.networking.v1.NetworkPolicyIngressRule[],
  opts: pulumi.CustomResourceOptions,
): k8s.networking.v1.NetworkPolicy {
  return new k8s.networking.v1.NetworkPolicy(name, {
    metadata,
    spec: { podSelector: { matchLabels: podLabels }, policyTypes: ["Ingress"], ingress: rules },
  }, opts);
}
