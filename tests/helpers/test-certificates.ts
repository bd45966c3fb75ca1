import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** PEM files made for one test run: a CA, a server certificate for 127.0.0.1/localhost, and client certificates. */
export interface TestCertificates {
  readonly dir: string;
  /** Paths of the PEM files. */
  readonly files: {
    readonly caCert: string; readonly serverCert: string; readonly serverKey: string;
    readonly clientCert: string; readonly clientKey: string;
    /** A client certificate signed by another CA, which the server must refuse. */
    readonly strangerCert: string; readonly strangerKey: string;
  };
  read(file: keyof TestCertificates["files"]): Buffer;
  remove(): void;
}

function openssl(dir: string, args: readonly string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

function issue(dir: string, name: string, subject: string, ca: string, extensions: string): void {
  writeFileSync(path.join(dir, `${name}.ext`), extensions);
  openssl(dir, ["req", ...EC_KEY, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject]);
  openssl(dir, ["x509", "-req", "-in", `${name}.csr`, "-CA", `${ca}.crt`, "-CAkey", `${ca}.key`, "-CAcreateserial", "-days", "2", "-out", `${name}.crt`, "-extfile", `${name}.ext`]);
}

/**
 * Generates fresh certificates with the openssl CLI (installed by npm test's pretest) in a temporary directory:
 * nothing secret is ever committed, and every run has its own keys.
 */
export function createTestCertificates(): TestCertificates {
  const dir = mkdtempSync(path.join(os.tmpdir(), "inference-tls-"));
  for (const ca of ["ca", "stranger-ca"]) {
    openssl(dir, ["req", "-x509", ...EC_KEY, "-keyout", `${ca}.key`, "-out", `${ca}.crt`, "-subj", `/CN=${ca} for tests`, "-days", "2"]);
  }
  issue(dir, "server", "/CN=localhost", "ca", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  issue(dir, "client", "/CN=test client", "ca", "extendedKeyUsage=clientAuth\n");
  issue(dir, "stranger", "/CN=stranger", "stranger-ca", "extendedKeyUsage=clientAuth\n");
  const files = {
    caCert: path.join(dir, "ca.crt"), serverCert: path.join(dir, "server.crt"), serverKey: path.join(dir, "server.key"),
    clientCert: path.join(dir, "client.crt"), clientKey: path.join(dir, "client.key"),
    strangerCert: path.join(dir, "stranger.crt"), strangerKey: path.join(dir, "stranger.key"),
  };
  return {
    dir,
    files,
    read: (file) => readFileSync(files[file]),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
