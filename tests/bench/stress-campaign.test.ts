import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sampleMalformedCases } from "../../bench/stress/malformed-requests";
import { runStressCampaign } from "../../bench/stress/run-stress";
import { parseStressOptions, type ScenarioId, stressProfile } from "../../bench/stress/stress-options";
import { EXAMPLE_REPOSITORY, REPO_ROOT } from "../helpers/server-process";

const outDir = mkdtempSync(path.join(os.tmpdir(), "stress-test-"));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe("stress campaign, short profile (what `npm run stress -- --short` runs)", () => {
  const profile = stressProfile(true, 15, outDir);
  it.each(profile.scenarios)("scenario (%s) passes every check", async (id: ScenarioId) => {
    const [result] = await runStressCampaign({ ...profile, scenarios: [id] }, { repositoryRoot: REPO_ROOT, exampleRepository: EXAMPLE_REPOSITORY }, () => undefined);
    const failed = result!.checks.filter((c) => !c.passed);
    if (failed.length > 0) console.log(JSON.stringify(result, null, 2));
    expect(failed).toEqual([]);
    if (id === "a") expect(result!.figures["sent"]).toBeGreaterThanOrEqual(300);
  }, 120_000);
});

describe("malformed request generation", () => {
  const valid = Buffer.from("0a0673696d706c65", "hex");

  it("replays exactly from a seed, half REST and half gRPC, interleaved", () => {
    const first = sampleMalformedCases(40, 7, valid);
    expect(sampleMalformedCases(40, 7, valid)).toEqual(first);
    expect(sampleMalformedCases(40, 8, valid)).not.toEqual(first);
    expect(first.filter((c) => c.protocol === "rest")).toHaveLength(20);
    expect(first.slice(0, 4).map((c) => c.protocol)).toEqual(["rest", "grpc", "rest", "grpc"]);
    expect(first.filter((c) => c.protocol === "grpc" && "bytes" in c)).toHaveLength(5);
  });
});

describe("npm run stress options", () => {
  it("runs (a)-(m) with a ten-minute soak by default, and (a)-(d), (g), (h), (j)-(m) only in the short profile", () => {
    const full = parseStressOptions([], REPO_ROOT);
    expect(full.scenarios).toEqual(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"]);
    expect([full.malformed.count, full.soak.durationMs]).toEqual([600, 600_000]);
    expect(parseStressOptions(["--short"], REPO_ROOT).scenarios).toEqual(["a", "b", "c", "d", "g", "h", "j", "k", "l", "m"]);
    const custom = parseStressOptions(["--scenarios", "e", "--soak-secs", "30", "--seed", "3", "--malformed", "350"], REPO_ROOT);
    expect([custom.scenarios, custom.soak.durationMs, custom.malformed.seed, custom.malformed.count]).toEqual([["e"], 30_000, 3, 350]);
  });
});
