import { describe, expect, it } from "vitest";
import { type LatencyChartPoint, latencyChartSpec } from "../../../tools/perf/latency-chart";
import { provenanceLines } from "../../../tools/perf/perf-report-header";

// The sweep: throughput folds back (213, 464, 386, 249 infer/s for concurrency 1-4); level 3 never settled.
const points: LatencyChartPoint[] = [213, 464, 386, 249].map((throughput, index) => ({
  series: "mlp", level: index + 1, levelLabel: `c${index + 1}`, stable: index !== 2, throughput, p50Ms: 4 + index, p90Ms: 8 + index, p99Ms: 10 * (index + 1),
}));

interface Layer {
  readonly transform?: readonly { readonly filter: string }[];
  readonly mark: { readonly type: string; readonly filled?: boolean };
  readonly encoding: Record<string, { readonly field?: string; readonly scale?: Record<string, unknown>; readonly value?: unknown }>;
}

const spec = latencyChartSpec(points, "mlp: latency vs throughput") as { data: { values: Record<string, unknown>[] }; layer: Layer[] };
const layerOf = (type: string): Layer[] => spec.layer.filter((layer) => layer.mark.type === type);

describe("latency chart spec", () => {
  it("labels every p50 and p99 point with its load level, so a folding sweep can be read", () => {
    const [text] = layerOf("text");
    expect(text!.encoding["text"]).toEqual({ field: "label" });
    expect(text!.transform).toEqual([{ filter: "datum.percentile !== 'p90'" }]);
    const labelled = spec.data.values.filter((value) => value["percentile"] !== "p90").map((value) => `${String(value["label"])}@${String(value["throughput"])}`);
    expect(labelled).toEqual(["c1@213", "c1@213", "c2@464", "c2@464", "c3@386", "c3@386", "c4@249", "c4@249"]);
    // Joined in load order, not sorted by throughput: the fold-back stays visible.
    expect(layerOf("line")[0]!.encoding["order"]).toMatchObject({ field: "order" });
  });

  it("draws points that did not stabilize differently from stable ones", () => {
    const [stable, unstable] = layerOf("point");
    expect(stable!.transform).toEqual([{ filter: "datum.measurement === 'stable'" }]);
    expect(unstable!.transform).toEqual([{ filter: "datum.measurement === 'did not stabilize'" }]);
    expect([stable!.mark.filled, unstable!.mark.filled]).toEqual([true, false]);
    expect(stable!.encoding["shape"]!.scale).toEqual({ domain: ["stable", "did not stabilize"], range: ["circle", "cross"] });
    expect(spec.data.values.filter((value) => value["measurement"] === "did not stabilize").map((value) => value["level"])).toEqual([3, 3, 3]);
  });

  it("puts latency on a log axis, so the levels below the knee do not flatten", () => {
    for (const layer of spec.layer.filter((each) => each.encoding["y"]?.scale !== undefined)) {
      expect(layer.encoding["y"]!.scale).toEqual({ type: "log" });
    }
    expect(layerOf("line")[0]!.encoding["y"]!.scale).toEqual({ type: "log" });
  });
});

describe("report header", () => {
  it("carries the date, the machine, the server's version and the exact command", () => {
    expect(provenanceLines({
      date: new Date("2025-03-04T05:06:07.891Z"), machine: "AMD EPYC, 2 cores, 8 GiB, host vm", server: { name: "triton", version: "2.55.0" },
      argv: ["inference-perf", "-m", "image_classifier", "--input-data", "../shared/data/images", "-H", "x-team: a b"],
    })).toEqual([
      "measured 2025-03-04T05:06:07Z on AMD EPYC, 2 cores, 8 GiB, host vm",
      "server: triton 2.55.0",
      "command: inference-perf -m image_classifier --input-data ../shared/data/images -H 'x-team: a b'",
    ]);
  });
});
