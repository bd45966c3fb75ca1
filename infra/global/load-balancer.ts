import * as gcp from "@pulumi/gcp";
import * as pulumi from "@pulumi/pulumi";
import { deletionPolicy } from "../deletion-policy";
import { inferenceServer } from "../inference-server";
import { describeMissingNegs, MISSING_NEG_HINT, type RegionNegs } from "../region";
import { createCloudArmorPolicy, type CloudArmorPolicyArgs } from "./cloud-armor-policy";
import { publicApiPathMatcher, REFUSE } from "./public-api-routes";

/** The standalone NEGs of every region and the Services that own them. */
export interface ServingBackends {
  /** Per region, the NEGs GKE has created (see findStandaloneNegs). */
  readonly regions: readonly pulumi.Output<RegionNegs>[];
  /**
   * The Kubernetes Services that own the NEGs. The backend services depend on them, so `pulumi destroy`
   * detaches the NEGs before their Services (and clusters) go; a NEG still referenced cannot be deleted
   * and would be left behind.
   */
  readonly owners: readonly pulumi.Resource[];
}

/** Arguments of {@link LoadBalancer}. */
export interface LoadBalancerArgs {
  readonly project: string;
  readonly backends: ServingBackends;
  /** Hostname for HTTPS with a Google-managed certificate; without it the load balancer serves plain HTTP. */
  readonly domain?: string;
  readonly maxRatePerEndpoint: number;
  readonly rateLimitRequestsPerMinute: number;
  readonly waf: CloudArmorPolicyArgs["waf"];
  readonly logSampleRate: number;
  readonly requestTimeoutSec: number;
  readonly grpcTimeoutSec: number;
  /** Refuse deletion of the global address (production: DNS points at it). */
  readonly protect: boolean;
}

/**
 * Every region's NEGs, per port. A region without NEGs (its GPUs could not start, say) leaves the others
 * serving; only when no region has any does `pulumi up` fail, naming each zone and Service.
 */
function attachableNegs(regions: readonly pulumi.Output<RegionNegs>[], parent: pulumi.Resource) {
  return pulumi.all([...regions]).apply((found) => {
    if (!pulumi.runtime.isDryRun() && found.every((region) => region.zones.length === 0)) {
      throw new pulumi.ResourceError(`no standalone NEG appeared in any region, so the load balancer would have no backend: ${found.map(describeMissingNegs).join("; ")}. ${MISSING_NEG_HINT}`, parent);
    }
    return { http: found.flatMap((region) => region.http), grpc: found.flatMap((region) => region.grpc) };
  });
}

/**
 * The global external Application Load Balancer: one anycast IP for every region. Requests go to the
 * nearest region with healthy capacity (RATE balancing: `maxRatePerEndpoint` per pod), REST to port 8000
 * and the KServe v2 gRPC service to port 8001 over HTTP/2, behind Cloud Armor (WAF and a per-client rate
 * limit). Only the public API groups are routed (see publicApiPathMatcher). With a domain, HTTPS is served
 * with a managed certificate under a MODERN, TLS 1.2+ SSL policy and HTTP redirects to it; gRPC clients need
 * that HTTPS frontend (the ALB speaks HTTP/2 to clients only over TLS).
 */
export class LoadBalancer extends pulumi.ComponentResource {
  readonly ipAddress: pulumi.Output<string>;
  /** Where REST clients connect. */
  readonly url: pulumi.Output<string>;

  constructor(name: string, args: LoadBalancerArgs, opts?: pulumi.ComponentResourceOptions) {
    super("gpu-inference:global:LoadBalancer", name, {}, opts);
    const child = { parent: this };
    const address = new gcp.compute.GlobalAddress(`${name}-address`, {
      project: args.project,
      ipVersion: "IPV4",
      addressType: "EXTERNAL",
      ...deletionPolicy(args.protect),
    }, child);
    // One check for both backends: gRPC endpoints are probed on the same pod's HTTP port, since readiness is
    // per server, not per protocol. Health-check logs record state changes only, not every probe.
    const healthCheck = new gcp.compute.HealthCheck(`${name}-ready`, {
      project: args.project,
      description: "KServe v2 server readiness",
      httpHealthCheck: {
        port: inferenceServer.ports.http,
        portSpecification: "USE_FIXED_PORT",
        requestPath: inferenceServer.health.readyPath,
      },
      checkIntervalSec: 5,
      timeoutSec: 5,
      healthyThreshold: 2,
      unhealthyThreshold: 2,
      logConfig: { enable: true },
    }, child);
    const securityPolicy = createCloudArmorPolicy(`${name}-armor`, {
      project: args.project,
      requestsPerMinute: args.rateLimitRequestsPerMinute,
      waf: args.waf,
    }, child);
    const negs = attachableNegs(args.backends.regions, this);
    const backendService = (suffix: string, protocol: "HTTP" | "H2C", groups: pulumi.Output<string[]>, timeoutSec: number) =>
      new gcp.compute.BackendService(`${name}-${suffix}`, {
        project: args.project,
        loadBalancingScheme: "EXTERNAL_MANAGED",
        protocol,
        healthChecks: healthCheck.id,
        // Zonal NEGs take RATE or CONNECTION balancing, not UTILIZATION.
        backends: groups.apply((links) => links.map((group) => ({ group, balancingMode: "RATE", maxRatePerEndpoint: args.maxRatePerEndpoint, capacityScaler: 1 }))),
        timeoutSec,
        connectionDrainingTimeoutSec: 30,
        securityPolicy: securityPolicy.id,
        logConfig: { enable: true, sampleRate: args.logSampleRate },
      }, { parent: this, dependsOn: [...args.backends.owners] });
    const httpBackend = backendService("http", "HTTP", negs.apply((found) => found.http), args.requestTimeoutSec);
    // The server speaks cleartext HTTP/2 (h2c) on 8001; the load balancer terminates the client's TLS.
    const grpcBackend = backendService("grpc", "H2C", negs.apply((found) => found.grpc), args.grpcTimeoutSec);
    const routes = new gcp.compute.URLMap(`${name}-routes`, {
      project: args.project,
      // Requests for any other host name (the bare IP with a domain set) match no host rule: refused too.
      defaultService: httpBackend.id,
      defaultRouteAction: REFUSE,
      hostRules: [{ hosts: [args.domain ?? "*"], pathMatcher: "public-api" }],
      pathMatchers: [publicApiPathMatcher("public-api", { http: httpBackend.id, grpc: grpcBackend.id })],
    }, child);
    const forwardingRule = (suffix: string, target: pulumi.Input<string>, portRange: string) =>
      new gcp.compute.GlobalForwardingRule(`${name}-${suffix}`, {
        project: args.project,
        target,
        ipAddress: address.id,
        portRange,
        ipProtocol: "TCP",
        loadBalancingScheme: "EXTERNAL_MANAGED",
      }, child);
    if (args.domain === undefined) {
      const httpProxy = new gcp.compute.TargetHttpProxy(`${name}-http-proxy`, { project: args.project, urlMap: routes.id }, child);
      forwardingRule("http", httpProxy.id, "80");
      this.url = pulumi.interpolate`http://${address.address}`;
    } else {
      const certificate = new gcp.compute.ManagedSslCertificate(`${name}-certificate`, {
        project: args.project,
        managed: { domains: [args.domain] },
      }, child);
      const sslPolicy = new gcp.compute.SSLPolicy(`${name}-tls`, {
        project: args.project,
        description: "TLS 1.2 or later with modern cipher suites only",
        profile: "MODERN",
        minTlsVersion: "TLS_1_2",
      }, child);
      const httpsProxy = new gcp.compute.TargetHttpsProxy(`${name}-https-proxy`, {
        project: args.project,
        urlMap: routes.id,
        sslCertificates: [certificate.id],
        sslPolicy: sslPolicy.id,
      }, child);
      forwardingRule("https", httpsProxy.id, "443");
      const redirect = new gcp.compute.URLMap(`${name}-https-redirect`, {
        project: args.project,
        defaultUrlRedirect: { httpsRedirect: true, stripQuery: false, redirectResponseCode: "MOVED_PERMANENTLY_DEFAULT" },
      }, child);
      const redirectProxy = new gcp.compute.TargetHttpProxy(`${name}-http-proxy`, { project: args.project, urlMap: redirect.id }, child);
      forwardingRule("http", redirectProxy.id, "80");
      this.url = pulumi.output(`https://${args.domain}`);
    }
    this.ipAddress = address.address;
    this.registerOutputs({ ipAddress: this.ipAddress, url: this.url });
  }
}
