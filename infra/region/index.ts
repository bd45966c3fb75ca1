export { Region, type RegionArgs, type RegionServing, type RegionServingArgs } from "./region";
export { describeMissingNegs, MISSING_NEG_HINT, type RegionNegs } from "./standalone-negs";
