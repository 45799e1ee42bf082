// Istio's IP autoallocation controller (pilot/pkg/controllers/ipallocate, run by the holder of
// istio-ip-autoallocate): each ServiceEntry that gets auto-allocated addresses (autoAllocatesAddresses)
// has `status.addresses` list, for each of its hosts (not wildcards, unless resolution is
// DYNAMIC_DNS) in spec order, one address of the IPv4 pool then one of the IPv6 pool
// (PILOT_IP_AUTOALLOCATE_IPV4_PREFIX 240.240.0.0/16, _IPV6_PREFIX 2001:2::/48), handed out in order.
// A host keeps the addresses it has; the list is written only when the hosts with addresses differ
// from the hosts. An entry that no longer gets addresses has its list emptied and its addresses
// freed; a deleted entry keeps its addresses taken until the next leader starts, as in istiod.
//
// On start every entry's status addresses, and spec addresses inside the pools, are taken first, so
// nothing held is handed out again. An address two entries hold is a conflict: the entry created
// first keeps it (none does when a spec address is among them) and the others get new addresses for
// all their hosts. Writes are JSON patches of the status subresource whose first operation tests
// that the status is still the one the allocation was made from; a refused one is tried again with
// the store's newer copy.
import { type Logger, pino } from "pino";
import { autoAllocatesAddresses, type ConfigObject, kindKey } from "../config/index.ts";
import type { ServiceEntrySpec } from "../config/types/index.ts";
import type { Unregister } from "../krt/index.ts";
import type { ConfigStore, JsonPatchOperation } from "../sources/index.ts";
import { compareStrings } from "../util/index.ts";
import { AddressPool, canonicalIp } from "./ip-pool.ts";
import { errorMessage } from "./kube-requests.ts";
import { controllerQueue, type WorkQueue } from "./work-queue.ts";

/** Where statuses go: the Kubernetes source the ServiceEntries come from (KubeSource). */
export interface IpAutoallocateTarget {
  readonly source: string;
  patchStatus(obj: ConfigObject, patch: readonly JsonPatchOperation[]): Promise<ConfigObject>;
}

export interface IpAutoallocateOptions {
  store: Pick<ConfigStore, "collection" | "get" | "list">;
  target: IpAutoallocateTarget;
  /** PILOT_IP_AUTOALLOCATE_IPV4_PREFIX; default 240.240.0.0/16. */
  ipv4Prefix?: string;
  /** PILOT_IP_AUTOALLOCATE_IPV6_PREFIX; default 2001:2::/48. */
  ipv6Prefix?: string;
  log?: Logger;
}

const DEFAULT_IPV4_PREFIX = "240.240.0.0/16";
const DEFAULT_IPV6_PREFIX = "2001:2::/48";
/** Attempts per key and change, 5 ms doubling between them, as istiod's queue. */
const MAX_ATTEMPTS = 5;
const SERVICE_ENTRY = kindKey("networking.istio.io", "ServiceEntry");
/** Queue keys of conflicts: the prefix, the entry that found it, and the addresses ("conflict ns/name a,b"). */
const CONFLICT = "conflict ";

type ServiceEntry = ConfigObject<ServiceEntrySpec> & { status?: { addresses?: unknown } | null };
interface StatusAddress {
  host: string;
  value: string;
}

export class IpAutoallocator {
  readonly #options: IpAutoallocateOptions;
  readonly #log: Logger;
  readonly #v4: AddressPool;
  readonly #v6: AddressPool;
  readonly #queue: WorkQueue;
  #unregister: Unregister | undefined;
  /** Conflicts found while taking the addresses in use at start, queued once that is done. */
  #deferred: string[] | undefined;

  /** Throws when a prefix is not one (istiod refuses to start then). */
  constructor(options: IpAutoallocateOptions) {
    this.#options = options;
    this.#log = options.log ?? pino({ level: "silent" });
    this.#v4 = new AddressPool(options.ipv4Prefix ?? DEFAULT_IPV4_PREFIX);
    this.#v6 = new AddressPool(options.ipv6Prefix ?? DEFAULT_IPV6_PREFIX);
    if (this.#v4.v6 || !this.#v6.v6) throw new Error("the IPv4 prefix must be IPv4 and the IPv6 prefix IPv6");
    this.#queue = controllerQueue(
      (key) => (key.startsWith(CONFLICT) ? this.#resolveConflict(key) : this.#reconcile(key)),
      MAX_ATTEMPTS,
      (key, err) => this.#log.error({ key, err: errorMessage(err) }, "ServiceEntry addresses not written"),
    );
  }

  /** Takes the addresses in use, then looks at every entry and follows their changes. */
  start(): void {
    const entries = this.#options.store.collection(SERVICE_ENTRY);
    this.#deferred = [];
    for (const entry of this.#entries()) {
      const owner = entries.keyOf(entry);
      this.#markUsed(specAddresses(entry), owner);
      this.#markUsed(statusAddresses(entry), owner);
    }
    const conflicts = this.#deferred;
    this.#deferred = undefined;
    this.#unregister = entries.register((event) => {
      if (event.type !== "delete") this.#queue.add(entries.keyOf(event.new));
    });
    for (const conflict of conflicts) this.#queue.add(conflict);
  }

  stop(): void {
    this.#unregister?.();
    this.#queue.stop();
  }

  /** Resolves once nothing is queued or being written (for tests). */
  settled(): Promise<void> {
    return this.#queue.settled();
  }

  /** The cluster's entries (the store may hold others, from files, which have no status to write). */
  #entries(): ServiceEntry[] {
    const { store, target } = this.#options;
    return store.list(SERVICE_ENTRY).flatMap((s) => (s.source === target.source ? [s.object as ServiceEntry] : []));
  }

  #entry(key: string): ServiceEntry | undefined {
    const { store, target } = this.#options;
    const [namespace, name] = key.split("/");
    const stored = store.get({ kind: SERVICE_ENTRY, namespace, name });
    return stored?.source === target.source ? (stored.object as ServiceEntry) : undefined;
  }

  async #reconcile(key: string): Promise<void> {
    const entry = this.#entry(key);
    if (!entry) return;
    if (!autoAllocatesAddresses(entry.metadata.labels, entry.spec)) {
      // A spec address inside a pool is not to be handed out.
      this.#markUsed(specAddresses(entry), key);
      const held = statusAddresses(entry);
      if (held.length === 0) return;
      await this.#write(entry, []);
      for (const address of held) this.#pool(address).free(address, key);
      this.#log.info({ serviceEntry: key }, "auto-allocated addresses cleared");
      return;
    }
    const byHost = addressesByHost(entry);
    this.#markUsed([...byHost.values()].flat(), key);
    const hosts = allocatedHosts(entry);
    if (hosts.length === byHost.size && hosts.every((h) => byHost.has(h))) return;
    await this.#allocate(entry, key, byHost);
    this.#log.info({ serviceEntry: key }, "addresses allocated");
  }

  /** Writes the addresses of every host: the ones in `keep`, new ones for the rest. */
  async #allocate(entry: ServiceEntry, key: string, keep: ReadonlyMap<string, string[]>): Promise<void> {
    const fresh: string[] = [];
    const addresses: StatusAddress[] = [];
    for (const host of allocatedHosts(entry)) {
      let values = keep.get(host);
      if (!values) {
        values = [this.#v4.allocateNext(key), this.#v6.allocateNext(key)].filter((a) => a !== undefined);
        if (values.length < 2) this.#log.error({ serviceEntry: key, host }, "an address pool is exhausted");
        fresh.push(...values);
      }
      for (const value of values) addresses.push({ host, value });
    }
    try {
      await this.#write(entry, addresses);
    } catch (err) {
      // Not written (a stale copy, most likely): the retry allocates from the newer one.
      for (const address of fresh) this.#pool(address).free(address, key);
      throw err;
    }
  }

  /** Sets `status.addresses`, provided the status is still the one `entry` has. */
  async #write(entry: ServiceEntry, addresses: StatusAddress[]): Promise<void> {
    const status = entry.status;
    const patch: JsonPatchOperation[] =
      status === undefined || status === null
        ? [
            { op: "test", path: "/status", value: null },
            { op: "add", path: "/status", value: { addresses } },
          ]
        : [
            // A missing member tests equal to null.
            { op: "test", path: "/status/addresses", value: status.addresses ?? null },
            { op: "add", path: "/status/addresses", value: addresses },
          ];
    await this.#options.target.patchStatus(entry, patch);
  }

  /** Istio's resolveConflict: the oldest holder keeps an address (none does against a spec address). */
  async #resolveConflict(key: string): Promise<void> {
    const conflicting = new Set(key.slice(key.lastIndexOf(" ") + 1).split(","));
    const holders = new Map<string, ServiceEntry>();
    let specHolder = false;
    const entries = this.#options.store.collection(SERVICE_ENTRY);
    for (const entry of this.#entries()) {
      if (statusAddresses(entry).some((a) => conflicting.has(a))) holders.set(entries.keyOf(entry), entry);
      specHolder ||= specAddresses(entry).some((a) => conflicting.has(a));
    }
    const ordered = [...holders].sort(
      ([aKey, a], [bKey, b]) =>
        compareStrings(a.metadata.creationTimestamp ?? "", b.metadata.creationTimestamp ?? "") ||
        compareStrings(aKey, bKey),
    );
    const errors: unknown[] = [];
    for (const [owner, entry] of ordered.slice(specHolder ? 0 : 1)) {
      this.#log.warn({ serviceEntry: owner }, "reassigned due to IP address conflict");
      await this.#allocate(entry, owner, new Map()).catch((err) => errors.push(err));
    }
    if (errors.length > 0) throw new AggregateError(errors, errors.map(errorMessage).join("; "));
  }

  /** Takes `addresses` for `owner`; those another entry holds are queued as a conflict. */
  #markUsed(addresses: readonly string[], owner: string): void {
    const conflicting = addresses.filter((a) => this.#pool(a).markUsed(a, owner));
    if (conflicting.length === 0) return;
    const conflict = `${CONFLICT}${owner} ${conflicting.join(",")}`;
    if (this.#deferred) this.#deferred.push(conflict);
    else this.#queue.add(conflict);
  }

  #pool(address: string): AddressPool {
    return address.includes(":") ? this.#v6 : this.#v4;
  }
}

/** The hosts that get addresses, once each in spec order: wildcards only for DYNAMIC_DNS. */
function allocatedHosts(entry: ServiceEntry): string[] {
  const dynamic = entry.spec?.resolution === "DYNAMIC_DNS";
  return [...new Set((entry.spec?.hosts ?? []).filter((h) => dynamic || !h.startsWith("*")))];
}

/** The addresses of the status by host, as Go parses them (others left out). */
function addressesByHost(entry: ServiceEntry): Map<string, string[]> {
  const byHost = new Map<string, string[]>();
  const list = entry.status?.addresses;
  for (const item of Array.isArray(list) ? (list as Partial<StatusAddress>[]) : []) {
    const value = canonicalIp(String(item?.value ?? ""));
    if (value === undefined) continue;
    const host = String(item?.host ?? "");
    byHost.set(host, [...(byHost.get(host) ?? []), value]);
  }
  return byHost;
}

function statusAddresses(entry: ServiceEntry): string[] {
  return [...addressesByHost(entry).values()].flat();
}

/** The spec's plain addresses (CIDRs do not parse as addresses, as in Go). */
function specAddresses(entry: ServiceEntry): string[] {
  return (entry.spec?.addresses ?? []).flatMap((a) => canonicalIp(a) ?? []);
}
