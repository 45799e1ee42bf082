// A CA for agent tests: Istio's CreateCertificate on an xDS server's TLS port (istiod's CA-issued
// certificate), callers authenticated by bearer tokens from a fixed table (a stand-in for TokenReview)
// or by their client certificates.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { type Authenticator, bearerToken } from "../../src/security/authn/index.ts";
import {
  certificateService,
  IstiodCertificate,
  istiodDnsNames,
  MemoryCaStore,
  SelfSignedCa,
} from "../../src/security/ca/index.ts";
import { GeneratorRegistry } from "../../src/xds/generator.ts";
import { ClientCertAuthenticator, XdsServer } from "../../src/xds/server/index.ts";

export const ISTIOD_NAME = "istiod.istio-system.svc";

/** `spiffe://cluster.local/ns/<ns>/sa/<account>`. */
export function spiffeId(account: string, namespace = "default"): string {
  return `spiffe://cluster.local/ns/${namespace}/sa/${account}`;
}

/** Tokens naming identities (what a TokenReview would answer). */
function tokenAuthenticator(tokens: Readonly<Record<string, string>>): Authenticator {
  return {
    name: "TestTokenAuthenticator",
    authenticate(ctx) {
      const token = bearerToken(ctx);
      if (token instanceof Error) return token;
      const identity = tokens[token];
      return identity ? { identities: [identity], authenticator: this.name } : new Error("unknown token");
    },
  };
}

export class TestCa {
  private constructor(
    readonly selfSigned: SelfSignedCa,
    private readonly istiod: IstiodCertificate,
    private readonly server: XdsServer,
    readonly port: number,
    /** Holds root-cert.pem (the CA_ROOT_CA file) and whatever a test writes there. */
    readonly dir: string,
  ) {}

  static async start(tokens: Readonly<Record<string, string>>): Promise<TestCa> {
    const selfSigned = await SelfSignedCa.start({ store: new MemoryCaStore(), org: "cluster.local" });
    const istiod = await IstiodCertificate.issue(selfSigned.ca, istiodDnsNames({ namespace: "istio-system" }));
    const server = new XdsServer({
      generators: new GeneratorRegistry(),
      authenticators: [new ClientCertAuthenticator(), tokenAuthenticator(tokens)],
      log: pino({ level: "silent" }),
    });
    server.addService(certificateService({ ca: selfSigned.ca, authenticate: (call) => server.authenticateCall(call) }));
    const { securePort = 0 } = await server.listen({
      grpcAddr: "127.0.0.1:0",
      secureGrpcAddr: "127.0.0.1:0",
      tls: { identity: istiod, roots: istiod },
    });
    const dir = mkdtempSync(join(tmpdir(), "sluice-ca-"));
    writeFileSync(join(dir, "root-cert.pem"), selfSigned.ca.trustBundle().join(""));
    return new TestCa(selfSigned, istiod, server, securePort, dir);
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get rootCertPath(): string {
    return join(this.dir, "root-cert.pem");
  }

  /** The CA_ROOT_CA file's content: the trust bundle. */
  get rootsPem(): string {
    return this.selfSigned.ca.trustBundle().join("");
  }

  /** Writes a token file under the CA's directory; returns its path. */
  tokenFile(name: string, token: string): string {
    const path = join(this.dir, name);
    writeFileSync(path, token);
    return path;
  }

  async close(): Promise<void> {
    this.istiod.close();
    await this.server.close(0);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
