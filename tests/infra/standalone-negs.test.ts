import { describe, expect, it } from "vitest";
import { findStandaloneNegs, isNotFoundError, type NegLookup } from "../../infra/region/standalone-negs";

const negNames = { http: "c-http", grpc: "c-grpc" };
const wait = { timeoutSeconds: 0.3, settleSeconds: 0.05, pollIntervalSeconds: 0.01 };

function lookUpFrom(available: (zone: string, name: string, attempt: number) => boolean | Error): NegLookup & { calls: number } {
  const attempts = new Map<string, number>();
  const lookUp = async (zone: string, name: string) => {
    lookUp.calls++;
    const attempt = (attempts.get(`${zone}/${name}`) ?? 0) + 1;
    attempts.set(`${zone}/${name}`, attempt);
    const answer = available(zone, name, attempt);
    if (answer instanceof Error) throw answer;
    return answer ? `link/${zone}/${name}` : undefined;
  };
  lookUp.calls = 0;
  return lookUp;
}

describe("findStandaloneNegs", () => {
  it("stops as soon as every zone has both NEGs", async () => {
    const lookUp = lookUpFrom((_zone, _name, attempt) => attempt >= 2);
    const negs = await findStandaloneNegs({ region: "r", zones: ["r-a", "r-b"], service: "ns/svc", negNames, lookUp, wait });
    expect(negs).toMatchObject({ zones: ["r-a", "r-b"], missingZones: [], http: ["link/r-a/c-http", "link/r-b/c-http"], grpc: ["link/r-a/c-grpc", "link/r-b/c-grpc"] });
    expect(lookUp.calls).toBe(8);
  });

  it("counts a zone only when both of its NEGs exist", async () => {
    const lookUp = lookUpFrom((zone, name) => zone === "r-a" || name === "c-http");
    const negs = await findStandaloneNegs({ region: "r", zones: ["r-a", "r-b"], service: "ns/svc", negNames, lookUp, wait });
    expect(negs).toMatchObject({ zones: ["r-a"], missingZones: ["r-b"], http: ["link/r-a/c-http"] });
  });

  it("gives the remaining zones the settle time once one zone is found, not the whole timeout", async () => {
    const startedAt = Date.now();
    const negs = await findStandaloneNegs({
      region: "r", zones: ["r-a", "r-b"], service: "ns/svc", negNames, lookUp: lookUpFrom((zone) => zone === "r-a"),
      wait: { timeoutSeconds: 30, settleSeconds: 0.1, pollIntervalSeconds: 0.01 },
    });
    expect(negs.missingZones).toEqual(["r-b"]);
    expect(Date.now() - startedAt).toBeLessThan(5_000);
  });

  it("looks once and waits for nothing when asked not to wait (pulumi preview)", async () => {
    const lookUp = lookUpFrom(() => false);
    const negs = await findStandaloneNegs({ region: "r", zones: ["r-a"], service: "ns/svc", negNames, lookUp, wait: false });
    expect(negs).toMatchObject({ zones: [], missingZones: ["r-a"] });
    expect(lookUp.calls).toBe(2);
  });

  it("fails at once on an error other than not-found", async () => {
    const denied = new Error("googleapi: Error 403: Required 'compute.networkEndpointGroups.get' permission, forbidden");
    const lookUp = lookUpFrom(() => denied);
    await expect(findStandaloneNegs({ region: "r", zones: ["r-a"], service: "ns/svc", negNames, lookUp, wait })).rejects.toBe(denied);
    expect(lookUp.calls).toBeLessThanOrEqual(2);
  });
});

describe("isNotFoundError", () => {
  it.each([
    ["googleapi: Error 404: The resource 'projects/p/zones/z/networkEndpointGroups/n' was not found, notFound", true],
    ["networkEndpointGroup projects/p/zones/z/networkEndpointGroups/n not found", true],
    ["googleapi: Error 403: Required 'compute.networkEndpointGroups.get' permission, forbidden", false],
  ])("%s -> %s", (message, expected) => {
    expect(isNotFoundError(new Error(message))).toBe(expected);
  });
});
