import { describe, expect, it } from "vitest";
import { parseIpv4Cidr, rangesOverlap } from "../../infra/cidr";

describe("parseIpv4Cidr", () => {
  it("reads a block as its first and last address", () => {
    expect(parseIpv4Cidr("10.0.16.0/20")).toEqual({ firstAddress: 0x0a001000, lastAddress: 0x0a001fff });
    expect(parseIpv4Cidr("255.255.255.255/32")).toEqual({ firstAddress: 0xffffffff, lastAddress: 0xffffffff });
  });

  it.each(["10.0.0.1/24", "10.0.0.0", "256.0.0.0/8", "10.0.0.0/33", "a.b.c.d/8"])("rejects %s", (cidr) => {
    expect(parseIpv4Cidr(cidr)).toBeUndefined();
  });
});

describe("rangesOverlap", () => {
  const range = (cidr: string) => parseIpv4Cidr(cidr) ?? (() => { throw new Error(cidr); })();

  it("is true for nested and shared blocks, false for adjacent ones", () => {
    expect(rangesOverlap(range("10.0.0.0/16"), range("10.0.16.0/20"))).toBe(true);
    expect(rangesOverlap(range("10.0.16.0/20"), range("10.0.16.0/20"))).toBe(true);
    expect(rangesOverlap(range("10.0.0.0/20"), range("10.0.16.0/20"))).toBe(false);
  });
});
