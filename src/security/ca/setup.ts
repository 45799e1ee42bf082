// Which CA istiod runs (Istio's createIstioCA): plugged-in certificates when the cacerts directory
// holds a complete set, an error when it holds part of one, else a self-signed root kept in a store.
// The knobs are Istio's environment variables.
import { resolve } from "node:path";
import { type Logger, pino } from "pino";
import { parseGoDuration } from "../../config/index.ts";
import {
  type CaOptions,
  type CertificateAuthority,
  DEFAULT_MAX_WORKLOAD_CERT_TTL_MS,
  DEFAULT_SELF_SIGNED_CA_CERT_TTL_MS,
  DEFAULT_WORKLOAD_CERT_TTL_MS,
  HOUR_MS,
} from "./ca.ts";
import type { KeyAlgorithm } from "./pki.ts";
import { loadPluggedCa, pluggedCaFiles, pluggedCaState, watchPluggedCa } from "./plugged.ts";
import { SelfSignedCa } from "./selfsigned.ts";
import { type CaSecretStore, FileCaStore, MemoryCaStore } from "./store.ts";

/** Istio's CA settings, from its environment variables. */
export interface CaSettings {
  /** ROOT_CA_DIR (./etc/cacerts): plugged-in certificates. */
  cacertsDir: string;
  /** DEFAULT_WORKLOAD_CERT_TTL (24h). */
  defaultCertTtlMs: number;
  /** MAX_WORKLOAD_CERT_TTL (2160h). */
  maxCertTtlMs: number;
  /** CITADEL_SELF_SIGNED_CA_CERT_TTL (87600h). */
  rootTtlMs: number;
  /** CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL (1h); ≤ 0 disables rotation. */
  rootCheckIntervalMs: number;
  /** CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE (20). */
  gracePeriodPercentile: number;
  /** CITADEL_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR (true). */
  rotatorJitter: boolean;
}

/** Reads the settings; a malformed value is an error naming the variable. */
export function caSettingsFromEnv(env: Record<string, string | undefined>): CaSettings {
  const duration = (name: string, fallbackMs: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallbackMs;
    const parsed = parseGoDuration(raw);
    if ("error" in parsed) throw new Error(`${name}: ${parsed.error}`);
    return parsed.ms;
  };
  const percentile = env.CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE;
  const grace = percentile ? Number(percentile) : 20;
  if (!Number.isInteger(grace))
    throw new Error(`CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: not an integer`);
  return {
    cacertsDir: env.ROOT_CA_DIR || "./etc/cacerts",
    defaultCertTtlMs: duration("DEFAULT_WORKLOAD_CERT_TTL", DEFAULT_WORKLOAD_CERT_TTL_MS),
    maxCertTtlMs: duration("MAX_WORKLOAD_CERT_TTL", DEFAULT_MAX_WORKLOAD_CERT_TTL_MS),
    rootTtlMs: duration("CITADEL_SELF_SIGNED_CA_CERT_TTL", DEFAULT_SELF_SIGNED_CA_CERT_TTL_MS),
    rootCheckIntervalMs: duration("CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL", HOUR_MS),
    gracePeriodPercentile: grace,
    rotatorJitter: env.CITADEL_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR !== "false",
  };
}

export interface IstioCaOptions extends Partial<CaSettings>, CaOptions {
  /** O= of a self-signed root: the mesh's trust domain. */
  trustDomain: string;
  /** Where a self-signed root lives (FileCaStore for --caDir, KubeCaSecretStore); memory when absent. */
  store?: CaSecretStore;
  keyAlgorithm?: KeyAlgorithm;
  /** How long a replaced root stays trusted; default until it expires. */
  rootOverlapMs?: number;
  log?: Logger;
}

export interface IstioCa {
  ca: CertificateAuthority;
  /** Set for a self-signed root (it rotates); undefined for plugged-in certificates. */
  selfSigned?: SelfSignedCa;
  kind: "plugged" | "self-signed";
  /** Stops root rotation or the watch of plugged-in files. */
  stop(): void;
}

export async function createIstioCa(options: IstioCaOptions): Promise<IstioCa> {
  const cacertsDir = options.cacertsDir ?? "./etc/cacerts";
  // A self-signed root written there would read back as an incomplete plugged-in set.
  if (options.store instanceof FileCaStore && resolve(options.store.location) === resolve(cacertsDir)) {
    throw new Error(`the CA directory ${options.store.location} must not be the plugged-in cacerts directory`);
  }
  const files = pluggedCaFiles(cacertsDir);
  const state = pluggedCaState(files);
  if (state === "incomplete") {
    throw new Error("failed to create an istiod CA: incomplete signing CA bundle detected");
  }
  if (state === "complete") {
    const ca = await loadPluggedCa(files, options);
    options.log?.info({ cacertsDir }, "CA: using the plugged-in CA certificates");
    const watcher = watchPluggedCa(ca, files, options.log ?? pino({ level: "silent" }));
    return { ca, kind: "plugged", stop: () => watcher.close() };
  }
  if (!options.store) options.log?.warn("CA: self-signed root kept in memory only; it changes on every restart");
  const selfSigned = await SelfSignedCa.start({
    ...options,
    store: options.store ?? new MemoryCaStore(),
    org: options.trustDomain,
  });
  const interval = options.rootCheckIntervalMs ?? HOUR_MS;
  if (interval > 0) selfSigned.run(interval, options.rotatorJitter ?? true);
  return { ca: selfSigned.ca, selfSigned, kind: "self-signed", stop: () => selfSigned.stop() };
}
