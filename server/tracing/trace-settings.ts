import { InferenceError, invalidArg } from "../core/index";

/** What Triton can record of a traced request: its timestamps, its tensors' values. */
export type TraceLevelName = "TIMESTAMPS" | "TENSORS";

/** Triton's trace level (a bit mask there): the names it records, in Triton's order; none is OFF. */
export type TraceLevel = readonly TraceLevelName[];

const LEVEL_NAMES: readonly TraceLevelName[] = ["TIMESTAMPS", "TENSORS"];

/** The level that records the names given (each known, OFF excluded), in Triton's order whatever order they came in. */
export function traceLevelOf(names: ReadonlySet<string>): TraceLevel {
  return LEVEL_NAMES.filter((name) => names.has(name));
}

export function isTraceLevelName(name: string): name is TraceLevelName {
  return (LEVEL_NAMES as readonly string[]).includes(name);
}

/** One scope's trace setting (global, or a model's), in Triton's units. */
export interface TraceSettingValues {
  readonly level: TraceLevel;
  /** One request in `rate` is traced: the rate-th, then every rate-th after it. */
  readonly rate: number;
  /** Traces still to collect; -1 = no limit. */
  readonly count: number;
  /** 0: every trace goes to `file`; n: each n traces go to `<file>.<index>`. */
  readonly logFrequency: number;
  readonly file: string;
}

/** Triton's defaults (`docs/user_guide/trace.md`). */
export const DEFAULT_TRACE_SETTING: TraceSettingValues = { level: [], rate: 1000, count: -1, logFrequency: 0, file: "" };

/** What a settings request changes: a new value, or `null` to clear the scope's own value (it falls back again). */
export type TraceSettingUpdate = { -readonly [K in keyof TraceSettingValues]?: TraceSettingValues[K] | null };

/** A settings request as both protocols carry it: each key's strings, or null to clear (gRPC: an empty list). */
export type TraceSettingRequest = ReadonlyMap<string, readonly string[] | null>;

export const UINT32_MAX = 2 ** 32 - 1;
export const INT32_MAX = 2 ** 31 - 1;

function integerSetting(key: string, text: string, min: number, max: number): number {
  if (!/^-?[0-9]+$/.test(text.trim())) throw invalidArg(`Unable to parse '${key}', got: ${text}`);
  const value = Number(text);
  if (value < min || value > max) throw invalidArg(`Unable to parse '${key}', value is out of range [ ${min}, ${max} ], got: ${text}`);
  return value;
}

function levelSetting(values: readonly string[]): TraceLevel {
  if (values.length === 0) throw invalidArg("'trace_level' must list at least one level");
  for (const value of values) {
    if (value === "OFF" && values.length > 1) throw invalidArg("Expect only one trace level 'OFF' is specified");
    if (value !== "OFF" && !isTraceLevelName(value)) throw invalidArg(`unknown trace level '${value}': expected OFF, TIMESTAMPS or TENSORS`);
  }
  return traceLevelOf(new Set(values));
}

function single(key: string, values: readonly string[]): string {
  if (values.length !== 1) throw invalidArg(`expect only 1 value for '${key}', got ${values.length}`);
  return values[0]!;
}

/**
 * Validates a settings request (Triton's HandleTrace / TraceSetting parsing), throwing INVALID_ARG for a value it
 * cannot parse and for unknown keys, and UNSUPPORTED for `trace_file`, which (as in Triton since 23.x) only the
 * command line sets: a network client must not choose where the server writes.
 */
export function parseTraceSettingRequest(request: TraceSettingRequest): TraceSettingUpdate {
  const update: TraceSettingUpdate = {};
  for (const [key, values] of request) {
    switch (key) {
      case "trace_file":
        throw new InferenceError("UNSUPPORTED", "trace file location can not be updated through network protocol");
      case "trace_level":
        update.level = values === null ? null : levelSetting(values);
        break;
      case "trace_rate":
        update.rate = values === null ? null : integerSetting(key, single(key, values), 0, UINT32_MAX);
        break;
      case "trace_count":
        update.count = values === null ? null : integerSetting(key, single(key, values), -1, INT32_MAX);
        break;
      case "log_frequency":
        update.logFrequency = values === null ? null : integerSetting(key, single(key, values), 0, UINT32_MAX);
        break;
      default:
        throw invalidArg(`unknown trace setting '${key}': expected trace_level, trace_rate, trace_count or log_frequency`);
    }
  }
  return update;
}

/** Why a setting that would trace cannot (Triton's TraceSetting validity), or undefined when it is usable. */
export function invalidReason(setting: TraceSettingValues): string | undefined {
  if (setting.level.length === 0) return "tracing is disabled";
  if (setting.rate === 0) return "sample rate must be non-zero";
  if (setting.file === "") return "trace file name is not given";
  return undefined;
}

/** Triton's response: every value a string, the level a list (OFF for none), the mode as Triton names it (`triton`, lower case). */
export function traceSettingResponse(setting: TraceSettingValues): Record<string, string | string[]> {
  return {
    trace_level: setting.level.length === 0 ? ["OFF"] : [...setting.level], trace_rate: String(setting.rate), trace_count: String(setting.count),
    log_frequency: String(setting.logFrequency), trace_file: setting.file, trace_mode: "triton",
  };
}
