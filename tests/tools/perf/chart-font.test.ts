import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PNG } from "pngjs";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../helpers/server-process";

const scratch = mkdtempSync(path.join(os.tmpdir(), "chart-font-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// A machine without fonts: fontconfig pointed at a configuration that lists none.
const EMPTY_FONTCONFIG = path.join(scratch, "empty.conf");
writeFileSync(EMPTY_FONTCONFIG, '<?xml version="1.0"?>\n<fontconfig></fontconfig>\n');

/**
 * Renders a chart titled `title` in a process of its own (fontconfig reads its configuration once per process)
 * whose fontconfig knows no fonts, with the built chart renderer.
 */
function renderTitle(title: string): PNG {
  const script = `
    const { renderVegaLiteChart } = require(${JSON.stringify(path.join(REPO_ROOT, "dist/tools/perf/vega-lite-chart.js"))});
    renderVegaLiteChart({ title: { text: ${JSON.stringify(title)}, fontSize: 40 }, data: { values: [{ x: 1 }] }, mark: "point", encoding: { x: { field: "x", type: "quantitative" } } })
      .then(({ png }) => process.stdout.write(png.toString("base64")));`;
  const out = execFileSync(process.execPath, ["-e", script], {
    env: { ...process.env, FONTCONFIG_FILE: EMPTY_FONTCONFIG, FONTCONFIG_PATH: scratch }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"],
  });
  return PNG.sync.read(Buffer.from(out, "base64"));
}

/** Pixels darker than mid-grey. */
function ink(png: PNG): number {
  let dark = 0;
  for (let i = 0; i < png.data.length; i += 4) if (png.data[i]! + png.data[i + 1]! + png.data[i + 2]! < 3 * 128) dark += 1;
  return dark;
}

describe("chart text on a machine without fonts", () => {
  it("is drawn in the packaged font: different letters leave different ink, where missing glyphs are identical boxes", () => {
    const wide = ink(renderTitle("WWWWWWWWWWWW"));
    const narrow = ink(renderTitle("iiiiiiiiiiii"));
    // Twelve 40 px W against twelve i: thousands of pixels apart in DejaVu Sans; 12 equal boxes would leave equal ink.
    expect(wide - narrow).toBeGreaterThan(2000);
  });
});
