import { describe, expect, it } from "vitest";
import { parseNvidiaSmiCsv } from "../../../server/metrics/nvidia-smi-csv";

const MIB = 1024 * 1024;

describe("parseNvidiaSmiCsv", () => {
  it("reads one GPU per line: uuid, utilization percent as a ratio, memory MiB as bytes", () => {
    const text = "GPU-5a8e1c2d-0000-1111-2222-333344445555, 87, 15360, 14208\nGPU-0b1c2d3e-aaaa-bbbb-cccc-ddddeeeeffff, 0, 81559, 0\n";
    expect(parseNvidiaSmiCsv(text)).toEqual([
      { uuid: "GPU-5a8e1c2d-0000-1111-2222-333344445555", utilization: 0.87, memoryTotalBytes: 15360 * MIB, memoryUsedBytes: 14208 * MIB },
      { uuid: "GPU-0b1c2d3e-aaaa-bbbb-cccc-ddddeeeeffff", utilization: 0, memoryTotalBytes: 81559 * MIB, memoryUsedBytes: 0 },
    ]);
  });

  it("leaves out the fields a GPU does not report (MIG instances, old boards)", () => {
    expect(parseNvidiaSmiCsv("GPU-5a8e1c2d-0000-1111-2222-333344445555, [N/A], 40960, [Not Supported]")).toEqual([
      { uuid: "GPU-5a8e1c2d-0000-1111-2222-333344445555", utilization: undefined, memoryTotalBytes: 40960 * MIB, memoryUsedBytes: undefined },
    ]);
  });

  it("skips blank lines and driver error text, and reads no GPU from empty output", () => {
    expect(parseNvidiaSmiCsv("")).toEqual([]);
    expect(parseNvidiaSmiCsv("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n\n")).toEqual([]);
    expect(parseNvidiaSmiCsv("\r\nGPU-1, 5, 100, 50\r\n").map((r) => [r.uuid, r.memoryUsedBytes])).toEqual([["GPU-1", 50 * MIB]]);
  });
});
