import { InvalidArgumentError } from "commander";
import { DEFAULT_TRACE_SETTING, type TraceLevel, type TraceSettingValues } from "../core/index";
import { parseInteger } from "./option-parsers";

const GLOBAL_KEYS = ["rate", "level", "count", "mode"];
const TRITON_KEYS = ["file", "log-frequency"];

function levelOf(values: readonly string[]): TraceLevel {
  let level: TraceLevel = DEFAULT_TRACE_SETTING.level;
  for (const value of values) {
    const upper = value.toUpperCase();
    if (upper === "TIMESTAMPS") level = "TIMESTAMPS";
    else if (upper === "TENSORS") throw new InvalidArgumentError("--trace-config level=TENSORS is not supported (TIMESTAMPS is)");
    else if (upper !== "OFF") throw new InvalidArgumentError(`--trace-config level: '${value}' is not OFF or TIMESTAMPS`);
  }
  // As Triton: OFF wins over anything named beside it.
  return values.some((value) => value.toUpperCase() === "OFF") ? "OFF" : level;
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
    if (mode === "triton" ? !TRITON_KEYS.includes(key) : ![...GLOBAL_KEYS, ...TRITON_KEYS].includes(key)) {
      throw new InvalidArgumentError(`--trace-config: unknown setting '${key}' (${mode === "triton" ? TRITON_KEYS.join(", ") : [...GLOBAL_KEYS, ...TRITON_KEYS].join(", ")})`);
    }
    if (key === "mode" && value !== "triton") throw new InvalidArgumentError(`--trace-config: unknown trace mode '${value}' (triton)`);
    if (key === "rate") setting.rate = parseInteger(0, 2 ** 32 - 1)(value);
    else if (key === "count") setting.count = parseInteger(-1, 2 ** 31 - 1)(value);
    else if (key === "log-frequency") setting.logFrequency = parseInteger(0, 2 ** 32 - 1)(value);
    else if (key === "file") setting.file = value;
    else if (key === "level") levels.push(value);
  }
  if (levels.length > 0) setting.level = levelOf(levels);
  return setting;
}
