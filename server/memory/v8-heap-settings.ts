import v8 from "node:v8";
import type { ServerOptions } from "../cli/server-options";

/** The V8 flags that {@link applyV8HeapSettings} sets for these options, in order. */
export function v8HeapFlags(options: Pick<ServerOptions, "heapGrowingPercent" | "allocationSitePretenuring">): string[] {
  return [
    `--heap-growing-percent=${options.heapGrowingPercent}`,
    options.allocationSitePretenuring ? "--allocation-site-pretenuring" : "--no-allocation-site-pretenuring",
  ];
}

/**
 * Sets the server's V8 garbage-collection flags at run time, before any model or frontend starts. V8 reads both at
 * every collection: the growing factor at each full GC, pretenuring when it digests the allocation sites' survival
 * feedback after a young one.
 */
export function applyV8HeapSettings(
  options: Pick<ServerOptions, "heapGrowingPercent" | "allocationSitePretenuring">, setFlags: (flag: string) => void = (flag) => v8.setFlagsFromString(flag),
): void {
  for (const flag of v8HeapFlags(options)) setFlags(flag);
}
