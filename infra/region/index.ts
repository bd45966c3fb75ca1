export { Region, type RegionArgs } from "./region";
