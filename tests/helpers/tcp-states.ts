import { readFileSync } from "node:fs";

/**
 * This machine's IPv4 TCP connections still ESTABLISHED (Linux /proc/net/tcp, state 01), as `localPort:remotePort`.
 * A server's end of a connection leaves that state as soon as the server closes it, even while its unsent data (and
 * so its FIN) still waits for a client that does not read; a test can wait for that instead of sleeping for a guess
 * of how long the server takes.
 */
export function establishedConnections(): Set<string> {
  const connections = new Set<string>();
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 4 || fields[3] !== "01") continue;
    const port = (address: string): number => Number.parseInt(address.split(":")[1]!, 16);
    connections.add(`${port(fields[1]!)}:${port(fields[2]!)}`);
  }
  return connections;
}
