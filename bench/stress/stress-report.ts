import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ScenarioResult } from "./scenario-result";

/** Where and on what a campaign ran: its figures mean little without the machine's load at the time. */
export interface StressSetup {
  readonly command: string;
  readonly startedAt: string;
  readonly machine: string;
  readonly loadAverageAtStart: string;
  readonly seed: number;
  /** The servers inherit it; the image sets 131072 (see server/Dockerfile). */
  readonly mallocMmapThreshold: string;
}

const cell = (value: unknown): string => String(value).replace(/\|/g, "\\|").replace(/\n/g, " ");

/** The report as markdown: a summary table, then each scenario's checks, figures and examples. */
function stressMarkdown(setup: StressSetup, results: readonly ScenarioResult[]): string {
  const lines = [
    "# Stress campaign report", "",
    `- command: \`${setup.command}\``, `- started: ${setup.startedAt}`, `- machine: ${setup.machine}`,
    `- load average at start (1/5/15 min): ${setup.loadAverageAtStart}`, `- fast-check seed: ${setup.seed}`,
    `- MALLOC_MMAP_THRESHOLD_ of the servers: ${setup.mallocMmapThreshold}`, "",
    "| scenario | result | duration (s) |", "|---|---|---|",
    ...results.map((r) => `| (${r.id}) ${r.title} | ${r.passed ? "PASS" : "FAIL"} | ${(r.durationMs / 1000).toFixed(1)} |`),
  ];
  for (const result of results) {
    lines.push("", `## (${result.id}) ${result.title}: ${result.passed ? "PASS" : "FAIL"}`, "", "| check | result | detail |", "|---|---|---|");
    for (const c of result.checks) lines.push(`| ${cell(c.name)} | ${c.passed ? "pass" : "FAIL"} | ${cell(c.detail)} |`);
    lines.push("", "| figure | value |", "|---|---|");
    for (const [name, value] of Object.entries(result.figures)) lines.push(`| ${name} | ${cell(value)} |`);
    if (result.examples.length > 0) lines.push("", "Examples:", "", "```", ...result.examples, "```");
  }
  return `${lines.join("\n")}\n`;
}

/** Writes stress-report.md and stress-report.json into `outDir`; resolves with their paths. */
export async function writeStressReport(outDir: string, setup: StressSetup, results: readonly ScenarioResult[]): Promise<string[]> {
  await mkdir(outDir, { recursive: true });
  const markdown = path.join(outDir, "stress-report.md");
  const json = path.join(outDir, "stress-report.json");
  await writeFile(markdown, stressMarkdown(setup, results));
  await writeFile(json, `${JSON.stringify({ setup, passed: results.every((r) => r.passed), scenarios: results }, null, 2)}\n`);
  return [markdown, json];
}
