import pino, { type Logger } from "pino";
import { InferenceError, invalidArg } from "../core/index";

export type LogFormat = "default" | "ISO8601";

/** Triton's log settings, as `GET /v2/logging` and the LogSettings RPC report them. */
export interface LogSettingsValues {
  /** Always "": lines go to stdout, and the file cannot be changed through the API (as in Triton). */
  readonly log_file: string;
  readonly log_info: boolean;
  readonly log_warning: boolean;
  readonly log_error: boolean;
  /** 0 = off; 1 and above log at pino's debug level. */
  readonly log_verbose_level: number;
  /** The `time` field of each JSON line: pino's epoch milliseconds, or an ISO 8601 UTC string. */
  readonly log_format: LogFormat;
}

type InitialLogSettings = Omit<LogSettingsValues, "log_file">;

/** One requested change, as a frontend decoded it: a JSON value (REST) or a SettingValue's member (gRPC; undefined when none is set). */
type LogSettingUpdate = Readonly<Record<string, unknown>>;

const LOG_SETTING_NAMES = ["log_file", "log_info", "log_warning", "log_error", "log_verbose_level", "log_format"] as const;
export const MAX_VERBOSE_LEVEL = 2 ** 31 - 1;

/** pino's numeric levels: each Triton toggle owns one, fatal goes with errors, debug is the verbose level's. */
const LEVEL_INFO = 30;
const LEVEL_WARN = 40;
const LEVEL_ERROR = 50;
const LEVEL_FATAL = 60;

/**
 * Checks a whole update before any of it applies, so a refused request changes nothing. Null values are skipped, as
 * Triton's REST frontend skips them. Messages are Triton's gRPC frontend's; unknown keys, which Triton ignores, are
 * refused so that a misspelt setting does not silently do nothing.
 */
function validated(update: LogSettingUpdate): Partial<InitialLogSettings> {
  const changes: { -readonly [K in keyof InitialLogSettings]?: InitialLogSettings[K] } = {};
  const given = (name: string): unknown => (Object.hasOwn(update, name) ? update[name] : null);
  if (given("log_file") !== null) throw new InferenceError("UNSUPPORTED", "log file location can not be updated through network protocol");
  for (const name of ["log_info", "log_warning", "log_error"] as const) {
    const value = given(name);
    if (value === null) continue;
    if (typeof value !== "boolean") throw invalidArg(`expect boolean for '${name}'`);
    changes[name] = value;
  }
  const verbose = given("log_verbose_level");
  if (verbose !== null) {
    if (typeof verbose !== "number") throw invalidArg("expect int32 for 'log_verbose_level'");
    if (!Number.isSafeInteger(verbose) || verbose < 0 || verbose > MAX_VERBOSE_LEVEL) {
      throw invalidArg(`'log_verbose_level' must be an integer in [0, ${MAX_VERBOSE_LEVEL}], got ${verbose}`);
    }
    changes.log_verbose_level = verbose;
  }
  const format = given("log_format");
  if (format !== null) {
    if (typeof format !== "string") throw invalidArg("expect string for 'log_format'");
    if (format !== "default" && format !== "ISO8601") throw invalidArg(`invalid argument for log_format, got: ${format}`);
    changes.log_format = format;
  }
  const unknown = Object.keys(update).find((name) => !(LOG_SETTING_NAMES as readonly string[]).includes(name));
  if (unknown !== undefined) throw invalidArg(`unknown log setting '${unknown}': expected one of ${LOG_SETTING_NAMES.join(", ")}`);
  return changes;
}

/**
 * Owns the server's log settings (Triton's logging extension) and the root pino logger they apply to. Changes take
 * effect at once for every logger derived from the root, those created before included: pino child loggers
 * inherit the root's level methods and hooks through their prototype unless given a level of their own (fastify's
 * per-request loggers are not), and the per-level filter and the timestamp read the current settings on every line.
 * Single-threaded: updates happen on the main thread between log calls.
 */
export class LogSettings {
  #current: LogSettingsValues;
  readonly #logger: Logger;

  constructor(initial: InitialLogSettings, destination?: pino.DestinationStream) {
    // In Triton's order, which updates (spread over it) keep.
    const { log_info, log_warning, log_error, log_verbose_level, log_format } = initial;
    this.#current = { log_file: "", log_info, log_warning, log_error, log_verbose_level, log_format };
    const enabled = (level: number): boolean => {
      if (level === LEVEL_INFO) return this.#current.log_info;
      if (level === LEVEL_WARN) return this.#current.log_warning;
      if (level === LEVEL_ERROR || level === LEVEL_FATAL) return this.#current.log_error;
      return true;
    };
    const options: pino.LoggerOptions = {
      level: LogSettings.#thresholdOf(initial.log_verbose_level),
      // pino's threshold is one level; Triton switches info, warning and error independently.
      hooks: {
        logMethod(args, method, level) {
          if (enabled(level)) method.apply(this, args);
        },
      },
      timestamp: () => (this.#current.log_format === "ISO8601" ? `,"time":"${new Date().toISOString()}"` : `,"time":${Date.now()}`),
    };
    this.#logger = destination === undefined ? pino(options) : pino(options, destination);
  }

  static #thresholdOf(verboseLevel: number): "debug" | "info" {
    return verboseLevel > 0 ? "debug" : "info";
  }

  /** The root logger; derive others from it with `child()`. */
  get logger(): Logger {
    return this.#logger;
  }

  /** Whether verbose (per-request) lines are wanted now: one field read, for the request path. */
  get verbose(): boolean {
    return this.#current.log_verbose_level > 0;
  }

  /** The full settings, in Triton's order. */
  current(): LogSettingsValues {
    return this.#current;
  }

  /**
   * Applies the settings an update names (all of them or, when one is refused, none) and returns the full settings.
   * Throws INVALID_ARG for a wrong type, an unknown setting or value, UNSUPPORTED for a new log file.
   */
  update(update: LogSettingUpdate): LogSettingsValues {
    const changes = validated(update);
    this.#current = { ...this.#current, ...changes };
    const threshold = LogSettings.#thresholdOf(this.#current.log_verbose_level);
    if (this.#logger.level !== threshold) this.#logger.level = threshold;
    return this.current();
  }
}
