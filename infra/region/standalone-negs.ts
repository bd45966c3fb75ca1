import { setTimeout as sleep } from "node:timers/promises";
import { type StackConfig } from "../stack-config";

/** How long and how often to look for a region's NEGs (stack config `loadBalancer.negWait`). */
export type NegWaitSettings = StackConfig["loadBalancer"]["negWait"];

/** The standalone NEGs of one region's Service that exist, and the zones that have none (yet). */
export interface RegionNegs {
  readonly region: string;
  /** `namespace/name` of the Service whose annotation asks for the NEGs. */
  readonly service: string;
  readonly negNames: { readonly http: string; readonly grpc: string };
  /** Self-links of the port-8000 NEGs found, in zone order. */
  readonly http: readonly string[];
  /** Self-links of the port-8001 NEGs found, in zone order. */
  readonly grpc: readonly string[];
  /** Zones where both NEGs exist. */
  readonly zones: readonly string[];
  /** Configured zones where at least one of the two NEGs was not found. */
  readonly missingZones: readonly string[];
}

/** Looks one NEG up: its self-link, or undefined while GKE has not created it (the API answers 404). */
export type NegLookup = (zone: string, name: string) => Promise<string | undefined>;

/** Arguments of {@link findStandaloneNegs}. */
export interface FindNegsArgs {
  readonly region: string;
  readonly zones: readonly string[];
  readonly service: string;
  readonly negNames: { readonly http: string; readonly grpc: string };
  readonly lookUp: NegLookup;
  /** Poll until found (`pulumi up`), or look once and report what exists (`pulumi preview`). */
  readonly wait: false | NegWaitSettings;
}

/** The Compute API's answer for a NEG that does not exist, as the provider reports it. */
export function isNotFoundError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /\b404\b|notFound|not found/i.test(message);
}

async function lookUpZone(args: FindNegsArgs, zone: string): Promise<{ http: string; grpc: string } | undefined> {
  const [http, grpc] = await Promise.all([args.lookUp(zone, args.negNames.http), args.lookUp(zone, args.negNames.grpc)]);
  return http === undefined || grpc === undefined ? undefined : { http, grpc };
}

/**
 * GKE's NEG controller creates a Service's standalone NEGs asynchronously, and only in zones where the
 * Service has endpoints (or that the annotation pre-provisions, where GKE supports it). This polls for them:
 * every configured zone that has both NEGs is attached; once one zone has them, the others get
 * `settleSeconds` more before the region goes ahead with what exists; a region with none by `timeoutSeconds`
 * is reported with no zones (the load balancer decides whether that is fatal, see `attachableNegs`).
 * Lookup errors other than "not found" (permissions, quota) fail at once.
 */
export async function findStandaloneNegs(args: FindNegsArgs): Promise<RegionNegs> {
  const found = new Map<string, { http: string; grpc: string }>();
  const startedAt = Date.now();
  let settleDeadline: number | undefined;
  for (;;) {
    for (const zone of args.zones.filter((candidate) => !found.has(candidate))) {
      const negs = await lookUpZone(args, zone);
      if (negs !== undefined) found.set(zone, negs);
    }
    if (args.wait === false || found.size === args.zones.length) break;
    const now = Date.now();
    if (found.size > 0) settleDeadline ??= now + args.wait.settleSeconds * 1000;
    const deadline = Math.min(startedAt + args.wait.timeoutSeconds * 1000, settleDeadline ?? Infinity);
    if (now >= deadline) break;
    await sleep(Math.min(args.wait.pollIntervalSeconds * 1000, deadline - now));
  }
  const zones = args.zones.filter((zone) => found.has(zone));
  return {
    region: args.region,
    service: args.service,
    negNames: args.negNames,
    http: zones.map((zone) => found.get(zone)!.http),
    grpc: zones.map((zone) => found.get(zone)!.grpc),
    zones,
    missingZones: args.zones.filter((zone) => !found.has(zone)),
  };
}

/** One line per region that lacks NEGs in some zone: which NEGs, which zones, which Service. */
export function describeMissingNegs(region: RegionNegs): string {
  return `region ${region.region}: Service ${region.service} has no NEG ${region.negNames.http} / ${region.negNames.grpc} in zone${region.missingZones.length === 1 ? "" : "s"} ${region.missingZones.join(", ")}`;
}

/** What an operator checks when a region's NEGs do not appear. */
export const MISSING_NEG_HINT =
  "GKE creates a Service's NEGs in the zones where its pods run: check that the inference pods are scheduled "
  + "(`kubectl -n inference get pods,events`: T4 quota or a zone stockout keeps GPU nodes from starting) and the "
  + "NEG controller's view (`kubectl -n inference get svcneg`), then run `pulumi up` again";
