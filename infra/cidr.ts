/** An IPv4 range as the inclusive interval of its addresses, read from `a.b.c.d/n` notation. */
export interface Ipv4Range {
  readonly firstAddress: number;
  readonly lastAddress: number;
}

const CIDR_PATTERN = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

/** Parses `a.b.c.d/n`; returns undefined for anything else, including host bits set below the prefix. */
export function parseIpv4Cidr(cidr: string): Ipv4Range | undefined {
  const match = CIDR_PATTERN.exec(cidr);
  if (match === null) return undefined;
  const [octetA, octetB, octetC, octetD, prefix] = match.slice(1).map(Number) as [number, number, number, number, number];
  if ([octetA, octetB, octetC, octetD].some((octet) => octet > 255) || prefix > 32) return undefined;
  const address = ((octetA << 24) >>> 0) + (octetB << 16) + (octetC << 8) + octetD;
  const size = 2 ** (32 - prefix);
  // GCP rejects a range whose address is not the first of its block (10.0.0.1/24); say so here, not at apply.
  if (address % size !== 0) return undefined;
  return { firstAddress: address, lastAddress: address + size - 1 };
}

/** True when two ranges share at least one address. */
export function rangesOverlap(a: Ipv4Range, b: Ipv4Range): boolean {
  return a.firstAddress <= b.lastAddress && b.firstAddress <= a.lastAddress;
}
