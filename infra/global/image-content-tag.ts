import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/**
 * What the server image is built from: the paths the repository's .dockerignore admits into the build context
 * (tests/infra/image-content-tag.test.ts keeps the two lists equal). Dockerfiles under server/ are left out, as
 * .dockerignore leaves them out; the one that builds the image is hashed on its own.
 */
export const IMAGE_INPUTS = ["package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json", "server/", "protocol/", "common/", "client/", "tools/"] as const;
const EXCLUDED = /^server\/Dockerfile/;

function filesUnder(root: string, relative: string): string[] {
  const full = path.join(root, relative);
  if (!fs.existsSync(full)) return [];
  if (!fs.statSync(full).isDirectory()) return [relative];
  return fs.readdirSync(full, { withFileTypes: true }).flatMap((entry) => filesUnder(root, path.posix.join(relative, entry.name)));
}

/**
 * A tag that names the image's inputs, not the commit: `src-` and the first 16 hex digits of a SHA-256 over every
 * input file's path and content, and the Dockerfile's. A push that leaves the server unchanged gives the same tag,
 * so the image resource sees no change, the Deployment keeps its digest and no GPU pod restarts; any change to
 * what goes into the image gives a new tag (and a build). Previews compute the same tag a runner would.
 */
export function imageContentTag(contextDir: string, dockerfile: string): string {
  const hash = createHash("sha256");
  const files = IMAGE_INPUTS.flatMap((input) => filesUnder(contextDir, input.replace(/\/$/, ""))).filter((file) => !EXCLUDED.test(file)).sort();
  for (const file of [...files, dockerfile]) {
    hash.update(file).update("\0").update(fs.readFileSync(path.join(contextDir, file))).update("\0");
  }
  return `src-${hash.digest("hex").slice(0, 16)}`;
}
