// Test certificates made with the openssl CLI: a CA, then leaf certificates with chosen SANs
// (a server's DNS/IP names, a workload's SPIFFE id), as files in a temporary directory.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export class TestCerts {
  readonly dir = mkdtempSync(join(tmpdir(), "sluice-xds-tls-"));

  constructor() {
    openssl(
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
      ...["-keyout", this.file("ca.key"), "-out", this.file("ca.crt"), "-subj", "/CN=sluice-test-ca", "-days", "1"],
    );
  }

  file(name: string): string {
    return join(this.dir, name);
  }

  /** Writes `<name>.key` and `<name>.crt` signed by the CA, with `san` ("URI:spiffe://...", "DNS:x,IP:y"). */
  issue(name: string, san: string): void {
    const f = (ext: string) => this.file(`${name}.${ext}`);
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", f("key"));
    writeFileSync(f("ext"), `subjectAltName=${san}\n`);
    openssl("req", "-new", "-key", f("key"), "-out", f("csr"), "-subj", `/O=sluice-test/CN=${name}`);
    openssl(
      ...["x509", "-req", "-in", f("csr"), "-CA", this.file("ca.crt"), "-CAkey", this.file("ca.key")],
      ...["-CAcreateserial", "-out", f("crt"), "-days", "1", "-extfile", f("ext")],
    );
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function openssl(...args: string[]): void {
  execFileSync("openssl", args, { stdio: "pipe" });
}
