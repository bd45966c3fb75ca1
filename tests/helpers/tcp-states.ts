import { readFileSync } from "node:fs";

/**
 * Local ports of this machine's IPv4 TCP sockets that are still ESTABLISHED (Linux /proc/net/tcp, state 01). A
 * client socket leaves that state once the server closes or resets its end, whether or not the client has read
 * what was sent, so a test can wait for the server's verdict instead of sleeping for a guess of how long it takes.
 */
export function establishedLocalPorts(): Set<number> {
  const ports = new Set<number>();
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 4 || fields[3] !== "01") continue;
    ports.add(Number.parseInt(fields[1]!.split(":")[1]!, 16));
  }
  return ports;
}
