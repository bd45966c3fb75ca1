import * as pulumi from "@pulumi/pulumi";

/** One resource the program declared, as the engine would receive it. */
export interface DeclaredResource {
  readonly type: string;
  readonly name: string;
  /** Resolved inputs, secrets as plaintext (a preview would show some of them as unknown). */
  readonly inputs: Record<string, unknown>;
  /** False for component resources (including the stack itself). */
  readonly custom: boolean;
}

/** One data-source lookup (invoke) the program made. */
export interface DeclaredCall {
  readonly token: string;
  readonly inputs: Record<string, unknown>;
}

/**
 * Replaces every secret input, which the mock monitor hands over as `{ [specialSigKey]: specialSecretSig,
 * value }`, with its plaintext, as a policy pack sees inputs.
 */
function unwrapSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unwrapSecrets);
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  if (record[pulumi.runtime.specialSigKey] === pulumi.runtime.specialSecretSig) return unwrapSecrets(record["value"]);
  return Object.fromEntries(Object.entries(record).map(([key, entry]) => [key, unwrapSecrets(entry)]));
}

const TEST_NET_ADDRESS = "203.0.113.10"; // RFC 5737 documentation range: obviously not a real address.

/**
 * Whether GKE has created the standalone NEG `name` in `zone` by the `attempt`-th lookup of it (1-based).
 * The default: every NEG exists from the first lookup.
 */
export type NegAvailability = (zone: string, name: string, attempt: number) => boolean;

/**
 * Pulumi mocks that record every resource and invoke and answer with plausible values for the outputs the
 * program reads (service account emails, the cluster's DNS endpoint, NEG self-links, image digests, generated
 * passwords), so that the whole program runs offline with no cloud credentials. Shared by `npm run plan` and
 * the tests, which can make NEGs appear late, in some zones only, or never (`negAvailability`), answering a
 * missing one as the Compute API does (404). An invoke it does not know fails loudly instead of returning nothing.
 */
export class RecordingMocks implements pulumi.runtime.Mocks {
  readonly resources: DeclaredResource[] = [];
  readonly calls: DeclaredCall[] = [];
  readonly #negLookups = new Map<string, number>();

  constructor(private readonly gcpProject: string, private readonly negAvailability: NegAvailability = () => true) {}

  newResource(args: pulumi.runtime.MockResourceArgs): pulumi.runtime.MockResourceResult {
    const inputs = unwrapSecrets(args.inputs ?? {}) as Record<string, unknown>;
    this.resources.push({ type: args.type, name: args.name, inputs, custom: args.custom ?? true });
    return { id: `${args.name}-id`, state: { ...inputs, ...this.computedState(args.type, args.name, inputs) } };
  }

  call(args: pulumi.runtime.MockCallArgs): pulumi.runtime.MockCallResult {
    const inputs = unwrapSecrets(args.inputs ?? {}) as Record<string, unknown>;
    this.calls.push({ token: args.token, inputs });
    switch (args.token) {
      case "gcp:compute/getNetworkEndpointGroup:getNetworkEndpointGroup": {
        const project = String(inputs["project"] ?? this.gcpProject);
        const [zone, name] = [String(inputs["zone"]), String(inputs["name"])];
        const attempt = (this.#negLookups.get(`${zone}/${name}`) ?? 0) + 1;
        this.#negLookups.set(`${zone}/${name}`, attempt);
        if (!this.negAvailability(zone, name, attempt)) {
          // The engine hands a failed invoke to the program as gRPC `details`, which the SDK turns into the message.
          const message = `googleapi: Error 404: The resource 'projects/${project}/zones/${zone}/networkEndpointGroups/${name}' was not found, notFound`;
          throw Object.assign(new Error(message), { details: message });
        }
        return {
          ...inputs,
          selfLink: `https://www.googleapis.com/compute/v1/projects/${project}/zones/${zone}/networkEndpointGroups/${name}`,
          networkEndpointType: "GCE_VM_IP_PORT",
          size: 1,
        };
      }
      case "gcp:organizations/getClientConfig:getClientConfig":
        return { accessToken: "mock-access-token", project: this.gcpProject, id: "client-config" };
      default:
        throw new Error(`RecordingMocks: no mock answer for invoke ${args.token}`);
    }
  }

  private computedState(type: string, name: string, inputs: Record<string, unknown>): Record<string, unknown> {
    const physicalName = typeof inputs["name"] === "string" ? inputs["name"] : name;
    const project = typeof inputs["project"] === "string" ? inputs["project"] : this.gcpProject;
    const selfLink = `https://www.googleapis.com/compute/v1/projects/${project}/global/${physicalName}`;
    switch (type) {
      case "gcp:serviceaccount/account:Account": {
        const email = `${String(inputs["accountId"])}@${project}.iam.gserviceaccount.com`;
        return { email, name: `projects/${project}/serviceAccounts/${email}` };
      }
      case "gcp:container/cluster:Cluster":
        return {
          name: physicalName,
          controlPlaneEndpointsConfig: { dnsEndpointConfig: { allowExternalTraffic: true, endpoint: `gke-${physicalName}.${String(inputs["location"])}.gke.goog` } },
        };
      case "random:index/randomPassword:RandomPassword":
        return { result: `generated-${name}` };
      case "kubernetes:core/v1:Service":
        return { metadata: { ...(inputs["metadata"] as object), uid: `${name}-uid` } };
      case "gcp:compute/globalAddress:GlobalAddress":
        return { name: physicalName, address: TEST_NET_ADDRESS, selfLink };
      case "docker-build:index:Image": {
        const tags = inputs["tags"] as string[] | undefined;
        const digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
        return { digest, ref: `${(tags?.[0] ?? name).replace(/:[^:/]+$/, "")}@${digest}` };
      }
      default:
        return { name: physicalName, selfLink };
    }
  }
}
