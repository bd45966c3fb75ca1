import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { LogSettings } from "../../../server/logging/log-settings";

/** A LogSettings whose root logger writes into an array of parsed JSON lines. */
function capture(initial: Partial<ConstructorParameters<typeof LogSettings>[0]> = {}): { settings: LogSettings; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter((text) => text !== "")) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const settings = new LogSettings({ log_info: true, log_warning: true, log_error: true, log_verbose_level: 0, log_format: "default", ...initial }, { write: (text: string) => destination.write(text) });
  return { settings, lines };
}

const messages = (lines: readonly Record<string, unknown>[]): unknown[] => lines.map((line) => line["msg"]);

describe("LogSettings", () => {
  it("switches info, warning and error independently, for child loggers made before the change too", () => {
    const { settings, lines } = capture();
    // fastify makes its request loggers with an options object; plain children have none.
    const children = [settings.logger.child({ component: "plain" }), settings.logger.child({ reqId: "r1" }, {})];
    settings.update({ log_info: false, log_error: false });
    for (const logger of [settings.logger, ...children]) {
      logger.info("info");
      logger.warn("warning");
      logger.error("error");
      logger.fatal("fatal");
    }
    expect(messages(lines)).toEqual(["warning", "warning", "warning"]);
    settings.update({ log_info: true, log_warning: false, log_error: true });
    lines.length = 0;
    children[1]!.info("info");
    children[1]!.warn("warning");
    children[1]!.error("error");
    expect(messages(lines)).toEqual(["info", "error"]);
  });

  it("writes debug lines exactly while the verbose level is above 0, for earlier children too", () => {
    const { settings, lines } = capture();
    const child = settings.logger.child({ reqId: "r1" }, {});
    child.debug("before");
    expect(settings.verbose).toBe(false);
    settings.update({ log_verbose_level: 1 });
    expect(settings.verbose).toBe(true);
    child.debug("during");
    settings.logger.debug("root during");
    settings.update({ log_verbose_level: 0 });
    child.debug("after");
    expect(messages(lines)).toEqual(["during", "root during"]);
  });

  it("writes the time field as epoch milliseconds by default and as an ISO 8601 string in ISO8601 format", () => {
    const { settings, lines } = capture();
    const child = settings.logger.child({ reqId: "r1" }, {});
    child.info("default");
    settings.update({ log_format: "ISO8601" });
    child.info("iso");
    expect(typeof lines[0]!["time"]).toBe("number");
    expect(lines[1]!["time"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(lines[1]!["time"] as string) - (lines[0]!["time"] as number))).toBeLessThan(60_000);
  });

  it("answers the full settings in Triton's order, and skips null values as Triton's REST frontend does", () => {
    const { settings } = capture({ log_verbose_level: 3, log_format: "ISO8601" });
    expect(Object.keys(settings.current())).toEqual(["log_file", "log_info", "log_warning", "log_error", "log_verbose_level", "log_format"]);
    expect(settings.update({ log_info: null, log_file: null, log_warning: false })).toEqual({
      log_file: "", log_info: true, log_warning: false, log_error: true, log_verbose_level: 3, log_format: "ISO8601",
    });
  });

  it.each([
    [{ log_file: "/tmp/server.log" }, "UNSUPPORTED", "log file location can not be updated through network protocol"],
    [{ log_info: "false" }, "INVALID_ARG", "expect boolean for 'log_info'"],
    [{ log_error: undefined }, "INVALID_ARG", "expect boolean for 'log_error'"],
    [{ log_verbose_level: true }, "INVALID_ARG", "expect int32 for 'log_verbose_level'"],
    [{ log_verbose_level: -1 }, "INVALID_ARG", "'log_verbose_level' must be an integer in [0, 2147483647], got -1"],
    [{ log_verbose_level: 1.5 }, "INVALID_ARG", "'log_verbose_level' must be an integer in [0, 2147483647], got 1.5"],
    [{ log_format: 8601 }, "INVALID_ARG", "expect string for 'log_format'"],
    [{ log_format: "iso8601" }, "INVALID_ARG", "invalid argument for log_format, got: iso8601"],
    [{ log_verbose: 1 }, "INVALID_ARG", "unknown log setting 'log_verbose': expected one of log_file, log_info, log_warning, log_error, log_verbose_level, log_format"],
  ])("refuses %j without changing anything", (update, code, message) => {
    const { settings } = capture();
    const before = settings.current();
    expect(() => settings.update({ log_info: false, log_verbose_level: 2, ...update })).toThrow(expect.objectContaining({ code, message }));
    expect(settings.current()).toEqual(before);
    expect(settings.verbose).toBe(false);
  });
});
