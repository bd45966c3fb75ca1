import type * as gcp from "@pulumi/gcp";
import type * as pulumi from "@pulumi/pulumi";
import { inferenceServer } from "../inference-server";

type PathMatcher = gcp.types.input.compute.URLMapPathMatcher;
type MatchRule = gcp.types.input.compute.URLMapPathMatcherRouteRuleMatchRule;
type Route = { readonly match: MatchRule; readonly service: pulumi.Input<string>; readonly refuse?: true };

/** What the load balancer answers, itself, for anything outside the public API: 404, as for an unknown path. */
export const REFUSE = { faultInjectionPolicy: { abort: { httpStatus: 404, percentage: 100 } } } as const;

/**
 * The URL map's path matcher: only Triton's public API groups (health, metadata, inference) reach the servers,
 * REST to the HTTP backend and the public methods of inference.GRPCInferenceService to the gRPC backend. Model
 * control, config, statistics, trace, logging and shared memory (also restricted by the server's admin key)
 * never leave the cluster; the load balancer answers them 404 without forwarding.
 */
export function publicApiPathMatcher(name: string, backends: { readonly http: pulumi.Input<string>; readonly grpc: pulumi.Input<string> }): PathMatcher {
  const { restPaths, restPathTemplates, refusedRestPaths, grpcMethods } = inferenceServer.publicRoutes;
  const routes: Route[] = [
    ...refusedRestPaths.map((path): Route => ({ match: { fullPathMatch: path }, service: backends.http, refuse: true })),
    ...restPaths.map((path): Route => ({ match: { fullPathMatch: path }, service: backends.http })),
    ...restPathTemplates.map((template): Route => ({ match: { pathTemplateMatch: template }, service: backends.http })),
    ...grpcMethods.map((method): Route => ({ match: { fullPathMatch: method }, service: backends.grpc })),
  ];
  return {
    name,
    defaultService: backends.http,
    defaultRouteAction: REFUSE,
    // Rules are tried by priority; the refusals come first so /v2/models/stats is not taken for a model.
    routeRules: routes.map((route, index) => ({
      priority: (index + 1) * 10,
      matchRules: [route.match],
      service: route.service,
      ...(route.refuse === true ? { routeAction: REFUSE } : {}),
    })),
  };
}
