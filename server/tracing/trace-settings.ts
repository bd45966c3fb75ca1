import { InferenceError, invalidArg } from "../core/index";

/** Triton's trace levels this server records: OFF, or TIMESTAMPS (TENSORS is refused). */
export type TraceLevel = "OFF" | "TIMESTAMPS";

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
export const DEFAULT_TRACE_SETTING: TraceSettingValues = { level: "OFF", rate: 1000, count: -1, logFrequency: 0, file: "" };

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
    if (value === "TENSORS") throw new InferenceError("UNSUPPORTED", "trace level 'TENSORS' is not supported by this server (TIMESTAMPS is)");
    if (value !== "OFF" && value !== "TIMESTAMPS") throw invalidArg(`unknown trace level '${value}': expected OFF or TIMESTAMPS`);
  }
  return values[0] === "OFF" ? "OFF" : "TIMESTAMPS";
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
  if (setting.level === "OFF") return "tracing is disabled";
  if (setting.rate === 0) return "sample rate must be non-zero";
  if (setting.file === "") return "trace file name is not given";
  return undefined;
}

/** Triton's response: every value a string, the level a list, the mode as Triton names it (`triton`, lower case). */
export function traceSettingResponse(setting: TraceSettingValues): Record<string, string | string[]> {
  return {
    trace_level: [setting.level], trace_rate: String(setting.rate), trace_count: String(setting.count),
    log_frequency: String(setting.logFrequency), trace_file: setting.file, trace_mode: "triton",
  };
}
