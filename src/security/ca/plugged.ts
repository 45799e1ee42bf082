// Plugged-in CA certificates (Istio's `cacerts` Secret mounted at ROOT_CA_DIR, ./etc/cacerts):
// ca-cert.pem and ca-key.pem sign, cert-chain.pem is the chain from ca-cert.pem up, root-cert.pem the
// roots; or the kubernetes.io/tls layout tls.crt, tls.key, ca.crt (detectSigningCABundleAndCRL).
import { existsSync, readFileSync, watch } from "node:fs";
import { dirname, join } from "node:path";
import type { Logger } from "pino";
import { type CaOptions, CertificateAuthority } from "./ca.ts";
import { importPrivateKey, x509 } from "./pki.ts";

export interface PluggedCaFiles {
  signingCertFile: string;
  signingKeyFile: string;
  /** Read one after another into cert-chain.pem. */
  certChainFiles: string[];
  rootCertFile: string;
}

/** The file names in `dir`: tls.crt's layout when tls.crt exists, else Istio's own. */
export function pluggedCaFiles(dir: string): PluggedCaFiles {
  const tlsCert = join(dir, "tls.crt");
  if (existsSync(tlsCert)) {
    return {
      signingCertFile: tlsCert,
      signingKeyFile: join(dir, "tls.key"),
      certChainFiles: [tlsCert, join(dir, "ca.crt")],
      rootCertFile: join(dir, "ca.crt"),
    };
  }
  return {
    signingCertFile: join(dir, "ca-cert.pem"),
    signingKeyFile: join(dir, "ca-key.pem"),
    certChainFiles: [join(dir, "cert-chain.pem")],
    rootCertFile: join(dir, "root-cert.pem"),
  };
}

/** Whether every file is there, some are (an error in Istio), or none (use a self-signed root). */
export function pluggedCaState(files: PluggedCaFiles): "complete" | "incomplete" | "absent" {
  const present = [
    existsSync(files.signingKeyFile),
    existsSync(files.signingCertFile),
    existsSync(files.rootCertFile),
    files.certChainFiles.some((f) => existsSync(f)),
  ];
  if (present.every(Boolean)) return "complete";
  return present.some(Boolean) ? "incomplete" : "absent";
}

/** A CA signing with plugged-in certificates (Istio's NewPluggedCertIstioCAOptions). */
export async function loadPluggedCa(files: PluggedCaFiles, options: CaOptions = {}): Promise<CertificateAuthority> {
  const read = (file: string) => readFileSync(file, "utf8");
  const certPem = read(files.signingCertFile);
  const basic = new x509.X509Certificate(certPem).getExtension(x509.BasicConstraintsExtension);
  if (!basic?.ca) throw new Error("certificate is not authorized to sign other certificates");
  const certChainPem = files.certChainFiles
    .filter((f) => existsSync(f))
    .map(read)
    .join("");
  try {
    return CertificateAuthority.create(
      {
        certPem,
        key: await importPrivateKey(read(files.signingKeyFile)),
        certChainPem,
        rootCertPem: read(files.rootCertFile),
      },
      options,
    );
  } catch (err) {
    throw new Error(`failed to create CA KeyCertBundle (${err instanceof Error ? err.message : String(err)})`);
  }
}

/**
 * Re-reads plugged-in files after they change (Istio's cacerts handleEvent): a new signing
 * certificate, key or chain under the same roots is taken; different roots are refused, as Istio
 * does unless ISTIO_MULTIROOT_MESH is on.
 */
export async function reloadPluggedCa(
  ca: CertificateAuthority,
  files: PluggedCaFiles,
): Promise<"updated" | "unchanged" | "roots-changed"> {
  const fresh = await loadPluggedCa(files);
  if (fresh.bundle.rootCertPem.trim() !== ca.bundle.rootCertPem.trim()) return "roots-changed";
  const { certPem, certChainPem } = fresh.bundle;
  if (certPem === ca.bundle.certPem && certChainPem === ca.bundle.certChainPem) return "unchanged";
  ca.setBundle(fresh.bundle);
  return "updated";
}

/** Watches the cacerts directory and reloads after changes settle (100ms, as Istio). */
export function watchPluggedCa(ca: CertificateAuthority, files: PluggedCaFiles, log: Logger): { close(): void } {
  let timer: NodeJS.Timeout | undefined;
  const reload = () => {
    reloadPluggedCa(ca, files).then(
      (result) => {
        if (result === "updated") log.info("CA: took the updated plugged-in CA certificates");
        if (result === "roots-changed") log.warn("CA: the plugged-in root changed; updating the root is not supported");
      },
      (err: unknown) =>
        log.error(
          { err: err instanceof Error ? err.message : String(err) },
          "CA: cannot reload plugged-in certificates",
        ),
    );
  };
  const watcher = watch(dirname(files.signingCertFile), () => {
    clearTimeout(timer);
    timer = setTimeout(reload, 100);
  });
  return {
    close: () => {
      clearTimeout(timer);
      watcher.close();
    },
  };
}
