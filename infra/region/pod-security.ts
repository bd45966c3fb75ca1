import type * as k8s from "@pulumi/kubernetes";

/**
 * Pod Security Admission labels for a namespace: the built-in admission controller refuses pods that break the
 * `enforce` level, and records (`audit`) and shows (`warn`) those that break the stricter one.
 * https://kubernetes.io/docs/concepts/security/pod-security-admission/
 */
export function podSecurityLabels(enforce: "restricted" | "baseline" | "privileged", auditAndWarn: "restricted" | "baseline" = "restricted"): Record<string, string> {
  return {
    "pod-security.kubernetes.io/enforce": enforce,
    "pod-security.kubernetes.io/audit": auditAndWarn,
    "pod-security.kubernetes.io/warn": auditAndWarn,
  };
}

/** A scratch volume and where containers with a read-only root filesystem mount it. */
export const scratchVolume = {
  volume: { name: "tmp", emptyDir: { sizeLimit: "1Gi" } } satisfies k8s.types.input.core.v1.Volume,
  mount: { name: "tmp", mountPath: "/tmp" } satisfies k8s.types.input.core.v1.VolumeMount,
} as const;

/**
 * What every container running the server image gets, which the `restricted` Pod Security Standard asks for:
 * the image's non-root user, no privilege escalation, no capabilities, the runtime's default seccomp profile,
 * and a read-only root filesystem (the only writable path is the {@link scratchVolume} at /tmp).
 */
export const restrictedContainerSecurityContext: k8s.types.input.core.v1.SecurityContext = {
  runAsNonRoot: true,
  runAsUser: 1000,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"] },
  seccompProfile: { type: "RuntimeDefault" },
};
