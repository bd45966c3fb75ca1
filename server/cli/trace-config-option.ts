import { InvalidArgumentError } from "@commander-js/extra-typings";
import { DEFAULT_TRACE_SETTING, INT32_MAX, isTraceLevelName, type TraceLevel, traceLevelOf, type TraceSettingValues, UINT32_MAX } from "../tracing/index";
import { parseInteger } from "../../common/option-parsers";

const GLOBAL_KEYS = ["rate", "level", "count", "mode"];
const TRITON_KEYS = ["file", "log-frequency"];
const ALL_KEYS = [...GLOBAL_KEYS, ...TRITON_KEYS];

/** Repeated `level`s add up, as Triton ORs them into its level mask. */
function levelOf(values: readonly string[]): TraceLevel {
  for (const value of values) {
    const name = value.toUpperCase();
    if (name !== "OFF" && !isTraceLevelName(name)) throw new InvalidArgumentError(`--trace-config level: '${value}' is not OFF, TIMESTAMPS or TENSORS`);
  }
  const names = new Set(values.map((value) => value.toUpperCase()));
  // As Triton: OFF wins over anything named beside it.
  return names.has("OFF") ? [] : traceLevelOf(names);
}

/**
 * Triton's `--trace-config [<mode>,]<setting>=<value>` (repeatable): global `rate`, `level` (repeatable), `count`
 * and `mode` (only `triton`), and the triton mode's `file` and `log-frequency` (accepted without the mode too).
 */
export function parseTraceConfig(entries: readonly string[]): TraceSettingValues {
  const setting = { ...DEFAULT_TRACE_SETTING };
  const levels: string[] = [];
  for (const entry of entries) {
    const match = /^(?:([a-z]+),)?([a-z-]+)=(.*)$/.exec(entry);
    if (match === null) throw new InvalidArgumentError(`--trace-config '${entry}' is not [<mode>,]<setting>=<value>`);
    const [, mode, key, value] = match as unknown as [string, string | undefined, string, string];
    if (mode === "opentelemetry" || (key === "mode" && value === "opentelemetry")) {
      throw new InvalidArgumentError("--trace-config: the opentelemetry trace mode is not supported (triton is)");
    }
    if (mode !== undefined && mode !== "triton") throw new InvalidArgumentError(`--trace-config: unknown trace mode '${mode}' (triton)`);
    const known = mode === "triton" ? TRITON_KEYS : ALL_KEYS;
    if (!known.includes(key)) throw new InvalidArgumentError(`--trace-config: unknown setting '${key}' (${known.join(", ")})`);
    if (key === "mode" && value !== "triton") throw new InvalidArgumentError(`--trace-config: unknown trace mode '${value}' (triton)`);
    if (key === "rate") setting.rate = parseInteger(0, UINT32_MAX)(value);
    else if (key === "count") setting.count = parseInteger(-1, INT32_MAX)(value);
    else if (key === "log-frequency") setting.logFrequency = parseInteger(0, UINT32_MAX)(value);
    else if (key === "file") setting.file = value;
    else if (key === "level") levels.push(value);
  }
  if (levels.length > 0) setting.level = levelOf(levels);
  return setting;
}
