/** The multi-region location of a continent, as Artifact Registry and Cloud Storage spell it. */
export interface MultiRegion {
  readonly artifactRegistry: string;
  readonly storage: string;
}

const US: MultiRegion = { artifactRegistry: "us", storage: "US" };
const EUROPE: MultiRegion = { artifactRegistry: "europe", storage: "EU" };
const ASIA: MultiRegion = { artifactRegistry: "asia", storage: "ASIA" };

/**
 * The multi-region on the same continent as a GCP region (us-*, northamerica-*: us; europe-*: europe/EU;
 * asia-*, australia-*: asia). Regions elsewhere (southamerica, me, africa) have no multi-region of their own:
 * their location is the region itself.
 */
export function multiRegionOf(region: string): MultiRegion {
  if (/^(us|northamerica)-/.test(region)) return US;
  if (region.startsWith("europe-")) return EUROPE;
  if (/^(asia|australia)-/.test(region)) return ASIA;
  return { artifactRegistry: region, storage: region.toUpperCase() };
}

/**
 * Whether `region` reads from `location` (an Artifact Registry or Cloud Storage location, a region or a
 * multi-region) without crossing continents, where every image pull and model read is inter-continental egress.
 */
export function isNearLocation(region: string, location: string): boolean {
  const wanted = location.toLowerCase();
  const home = multiRegionOf(region);
  // The region itself and its Artifact Registry multi-region map to its own multi-region; Cloud Storage's EU does not.
  return wanted === home.storage.toLowerCase() || multiRegionOf(wanted).artifactRegistry === home.artifactRegistry;
}
