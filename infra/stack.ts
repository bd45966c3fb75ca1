import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import {
  imageContentTag, listModelRepositoryFiles, LoadBalancer, ModelBucket, ProjectServices, restrictedApiKey, ServerImage, ServiceAccounts, Vpc,
  WorkloadIdentityBinding,
} from "./global";
import { inferenceServer, serverServiceAccountName } from "./inference-server";
import { readMonitoringAssets } from "./monitoring-assets";
import { Region } from "./region";
import { continentOf, definedEntries, type StackConfig } from "./stack-config";

/** The CUDA image's Dockerfile, relative to the project root. */
const SERVER_DOCKERFILE = "server/Dockerfile.cuda";

/** Local files the program reads, resolved by the caller (main.ts: the repository; tests: fixtures). */
export interface StackSources {
  /** Root of the repository: the image's build context; `modelRepository.sourceDir` is relative to it. */
  readonly projectRoot: string;
  /** Folder of Grafana dashboards (`*.json`) and the Prometheus rule file (`alerts.yaml`). */
  readonly dashboardsDir: string;
}

// Paths recorded in resource inputs are relative to where `pulumi` runs (the project root), so a checkout in
// another folder (a laptop, a CI runner) produces no diff.
function pathFromWorkingDirectory(target: string): string {
  return path.relative(process.cwd(), target) || ".";
}

/** The sources of a checkout of this repository: dashboards/ and the model repository beside Pulumi.yaml. */
export function repositorySources(projectRoot: string): StackSources {
  return { projectRoot, dashboardsDir: path.join(projectRoot, "dashboards") };
}

/** What `pulumi stack output` shows. */
export interface StackOutputs {
  /** Where REST clients send requests (https://<domain> or http://<ip>). */
  readonly url: pulumi.Output<string>;
  readonly ipAddress: pulumi.Output<string>;
  /** host:port for gRPC clients (needs the HTTPS frontend, so a domain). */
  readonly grpcEndpoint: string;
  /**
   * Per region: the GKE cluster name, how to open its Grafana, the zones the load balancer serves from, and the
   * image and model bucket of its continent.
   */
  readonly clusters: pulumi.Output<Record<string, {
    readonly name: string;
    readonly grafana: string;
    readonly servingZones: readonly string[];
    readonly zonesWithoutNeg: readonly string[];
    readonly image: string;
    readonly modelBucket: string;
  }>>;
  /** The server image the first region's continent runs (digest-qualified when built here; other continents: `clusters`). */
  readonly image: pulumi.Output<string>;
  /** The first region's continent's model bucket (other continents: `clusters`). */
  readonly modelBucket: pulumi.Output<string>;
  /** The `admin-key` header value the restricted APIs require (secret). */
  readonly adminKey: pulumi.Output<string>;
}

/**
 * The whole stack: the project's APIs; global VPC and identities; the image's repository and the model bucket on
 * every continent the regions span; one {@link Region} per configured region (cluster first, then, once that
 * region's Workload Identity binding exists, the workload, on its continent's image and bucket); then the global
 * load balancer over every region's NEGs. Local inputs (dashboards, model files) are read
 * first, so a missing file fails before any resource is declared.
 */
export function createStack(config: StackConfig, sources: StackSources): StackOutputs {
  const monitoringAssets = readMonitoringAssets(sources.dashboardsDir);
  const modelFiles = listModelRepositoryFiles(
    pathFromWorkingDirectory(path.resolve(sources.projectRoot, config.modelRepository.sourceDir)),
    { sourceDirKey: `${pulumi.getProject()}:modelRepository.sourceDir`, modelsKey: `${pulumi.getProject()}:modelRepository.models`, ...definedEntries({ models: config.modelRepository.models }) },
  );
  const { project, namePrefix } = config;
  const nodeTag = `${namePrefix}-node`;

  // Everything waits for the APIs: a component's children register only after its dependencies exist.
  const apis = new ProjectServices(`${namePrefix}-apis`, { project });
  const afterApis = { dependsOn: [...apis.services] };
  const vpc = new Vpc(`${namePrefix}-vpc`, { project, nodeTag, firewallLogging: config.vpc.firewallLogging }, afterApis);
  const accounts = new ServiceAccounts(`${namePrefix}-accounts`, { project, namePrefix }, afterApis);
  // One build, pushed to a repository on every continent the regions span; a prebuilt image serves them all.
  const prebuilt = config.image.reference;
  const images = prebuilt === undefined
    ? new ServerImage(`${namePrefix}-image`, {
      project,
      repositoryId: namePrefix,
      registries: config.continents.map((continent) => ({ location: continent.registryLocation, suffix: continent.suffix })),
      tag: config.image.tag ?? imageContentTag(sources.projectRoot, SERVER_DOCKERFILE),
      contextDir: pathFromWorkingDirectory(sources.projectRoot),
      dockerfile: SERVER_DOCKERFILE,
      nodeServiceAccountEmail: accounts.nodeAccount.email,
      protect: config.protectResources,
    }, afterApis).imageReferences
    : config.continents.map(() => pulumi.output(prebuilt));
  const buckets = config.continents.map((continent) => new ModelBucket(`${namePrefix}-models${continent.suffix}`, {
    project,
    bucketName: continent.bucketName,
    location: continent.bucketLocation,
    files: modelFiles,
    readerServiceAccountEmail: accounts.serverAccount.email,
    forceDestroy: config.environment !== "prod",
    protect: config.protectResources,
  }, afterApis).bucketName);
  const continentIndex = (regionName: string): number => config.continents.indexOf(continentOf(config, regionName));
  const adminKey = restrictedApiKey(`${namePrefix}-admin-key`, config.adminKey);

  const regions = config.regions.map((region) => new Region(region.name, {
    region,
    stack: config,
    networkId: vpc.network.id,
    nodeTag,
    nodeServiceAccountEmail: accounts.nodeAccount.email,
  }, afterApis));
  const serving = regions.map((region) => region.serve({
    stack: config,
    serverServiceAccountEmail: accounts.serverAccount.email,
    // Per region, after that region's cluster only (its pool of identities exists once a cluster does).
    serverIdentity: new WorkloadIdentityBinding(`${namePrefix}-${region.regionName}-server-identity`, {
      project,
      serviceAccountId: accounts.serverAccount.name,
      kubernetesNamespace: inferenceServer.kubernetes.namespace,
      kubernetesServiceAccount: serverServiceAccountName(region.regionName),
      clusters: [region.cluster],
    }),
    image: images[continentIndex(region.regionName)]!,
    modelBucketName: buckets[continentIndex(region.regionName)]!,
    adminKey,
    monitoringAssets,
  }));
  const loadBalancer = new LoadBalancer(`${namePrefix}-lb`, {
    project,
    backends: { regions: serving.map((region) => region.negs), owners: serving.map((region) => region.negOwner) },
    ...(config.domain === undefined ? {} : { domain: config.domain }),
    maxRatePerEndpoint: config.loadBalancer.maxRatePerEndpoint,
    rateLimitRequestsPerMinute: config.loadBalancer.rateLimitRequestsPerMinute,
    waf: config.loadBalancer.waf,
    logSampleRate: config.loadBalancer.logSampleRate,
    requestTimeoutSec: config.loadBalancer.requestTimeoutSec,
    grpcTimeoutSec: config.loadBalancer.grpcTimeoutSec,
    protect: config.protectResources,
  }, afterApis);

  const clusters = pulumi.all(regions.map((region, index) => pulumi.all([
    region.clusterName, region.grafanaAccess, serving[index]!.negs, images[continentIndex(region.regionName)]!, buckets[continentIndex(region.regionName)]!,
  ]).apply(([name, grafana, negs, image, modelBucket]) =>
    [region.regionName, { name, grafana, servingZones: negs.zones, zonesWithoutNeg: negs.missingZones, image, modelBucket }] as const)));
  return {
    url: loadBalancer.url,
    ipAddress: loadBalancer.ipAddress,
    grpcEndpoint: config.domain === undefined ? `none: gRPC needs HTTPS, set ${pulumi.getProject()}:domain` : `${config.domain}:443`,
    clusters: clusters.apply((entries) => Object.fromEntries(entries)),
    image: images[0]!,
    modelBucket: buckets[0]!,
    adminKey,
  };
}
