import os from "node:os";

/** Where and how a run was made: what a reader of a saved report needs to trust or repeat it. */
export interface RunProvenance {
  readonly date: Date;
  readonly machine: string;
  /** The server's own name and version (`GET /v2`). */
  readonly server: { readonly name: string; readonly version: string };
  /** The command line as typed, program name first. */
  readonly argv: readonly string[];
}

/** This machine in a line: CPU model, cores, memory, host name. */
export function describeMachine(): string {
  const cpu = os.cpus()[0]?.model.trim() ?? "unknown CPU";
  return `${cpu}, ${os.availableParallelism()} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, host ${os.hostname()}`;
}

/** An argument as a POSIX shell would need it quoted to give it back. */
function shellQuote(argument: string): string {
  return /^[\w@%+=:,./-]+$/.test(argument) ? argument : `'${argument.replace(/'/g, "'\\''")}'`;
}

/** The report's header lines: date, machine, server version and the exact command. */
export function provenanceLines(run: RunProvenance): string[] {
  return [
    `measured ${run.date.toISOString().replace(/\.\d+Z$/, "Z")} on ${run.machine}`,
    `server: ${run.server.name} ${run.server.version}`,
    `command: ${run.argv.map(shellQuote).join(" ")}`,
  ];
}
