import { createHash, timingSafeEqual } from "node:crypto";

/** Triton's restricted API groups (`src/restricted_features.h`), in Triton's order. */
export const API_GROUPS = [
  "health", "metadata", "inference", "shared-memory", "model-config", "model-repository", "statistics", "trace", "logging",
] as const;

export type ApiGroup = (typeof API_GROUPS)[number];

export function isApiGroup(value: string): value is ApiGroup {
  return (API_GROUPS as readonly string[]).includes(value);
}

/**
 * The header a restricted group's requests must carry, and its value. `header` is lower case: HTTP header names
 * are case-insensitive and gRPC metadata keys are lower case by definition.
 */
export interface ApiRestriction {
  readonly header: string;
  readonly value: string;
}

/** Restricted groups and what unlocks each; a group not in the map is open. */
export type ApiRestrictions = ReadonlyMap<ApiGroup, ApiRestriction>;

const digest = (text: string): Buffer => createHash("sha256").update(text).digest();

/**
 * A test of whether a request's header value unlocks the restriction. Both sides are hashed so the comparison
 * takes the same time whatever the received value is: its duration tells an attacker nothing about the expected
 * value. The expected side is hashed once, here, rather than on every request.
 */
export function unlocker(restriction: ApiRestriction): (received: string | undefined) => boolean {
  const expected = digest(restriction.value);
  return (received) => received !== undefined && timingSafeEqual(expected, digest(received));
}
