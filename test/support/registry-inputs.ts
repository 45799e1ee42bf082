// Registry inputs for tests: a StaticCollection per kind, as the config store provides them.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { readConfigPaths } from "../../src/config/decode.ts";
import type { ConfigObject } from "../../src/config/index.ts";
import { type Collection, StaticCollection } from "../../src/krt/index.ts";
import type { RegistryInputs, Service } from "../../src/registry/index.ts";

const KIND_INPUTS: Record<string, keyof RegistryInputs> = {
  Service: "services",
  EndpointSlice: "endpointSlices",
  Endpoints: "endpoints",
  Pod: "pods",
  Node: "nodes",
  ServiceEntry: "serviceEntries",
  WorkloadEntry: "workloadEntries",
  WorkloadGroup: "workloadGroups",
  Namespace: "namespaces",
};

/** Istio's sample configs, beside the repository. */
export const CONFORMANCE_INPUTS = fileURLToPath(new URL("../../../shared/conformance/istio/inputs", import.meta.url));

/**
 * The objects of config files (Istio's sample configs unless told), as `kubectl apply` would see
 * them: an object without a namespace lands in "default". A document that does not decode fails.
 */
export function readInputs(paths: string[] = [CONFORMANCE_INPUTS]): ConfigObject[] {
  const documents = readConfigPaths(paths);
  assert.deepEqual(
    documents.filter((d) => d.error),
    [],
  );
  return documents.flatMap((d): ConfigObject[] =>
    d.object ? [{ ...d.object, metadata: { namespace: "default", ...d.object.metadata } }] : [],
  );
}

type ItemOf<C> = C extends Collection<infer T> ? T : never;
/** Each input as a static collection of its kind's objects (the caller puts objects of that kind in). */
export type StaticInputs = { [K in keyof RegistryInputs]-?: StaticCollection<ItemOf<RegistryInputs[K]>> };

/** Objects of the kinds the registry reads go to their collection; other kinds are ignored. */
export function staticInputs(objects: readonly ConfigObject[] = []): StaticInputs {
  const byInput = new Map<keyof RegistryInputs, ConfigObject[]>();
  for (const object of objects) {
    const input = KIND_INPUTS[object.kind];
    if (input) byInput.set(input, [...(byInput.get(input) ?? []), object]);
  }
  // The objects were sorted into inputs by kind, so each collection holds its input's kind.
  const collection = <T>(input: keyof RegistryInputs) => new StaticCollection((byInput.get(input) ?? []) as T[]);
  return {
    services: collection("services"),
    endpointSlices: collection("endpointSlices"),
    endpoints: collection("endpoints"),
    pods: collection("pods"),
    nodes: collection("nodes"),
    serviceEntries: collection("serviceEntries"),
    workloadEntries: collection("workloadEntries"),
    workloadGroups: collection("workloadGroups"),
    namespaces: collection("namespaces"),
  };
}

export function k8s(kind: string, namespace: string, name: string, body: Record<string, unknown> = {}): ConfigObject {
  const apiVersion = kind === "EndpointSlice" ? "discovery.k8s.io/v1" : "v1";
  const { metadata, ...rest } = body;
  return { apiVersion, kind, metadata: { name, namespace, ...(metadata as object | undefined) }, ...rest };
}

export function istio(
  kind: string,
  namespace: string,
  name: string,
  spec: unknown,
  metadata: object = {},
): ConfigObject {
  return { apiVersion: "networking.istio.io/v1", kind, metadata: { name, namespace, ...metadata }, spec };
}

/**
 * A Kubernetes ClusterIP service with every other field empty or off (the default address follows
 * the addresses); tests give what matters.
 */
export function testService(
  fields: Pick<Service, "hostname" | "namespace" | "name" | "ports"> & Partial<Service>,
): Service {
  const addresses = fields.addresses ?? [];
  return {
    objectName: fields.name,
    registry: "Kubernetes",
    addresses,
    defaultAddress: addresses[0] ?? "0.0.0.0",
    resolution: "ClientSideLB",
    meshExternal: false,
    exportTo: [],
    labels: {},
    selector: null,
    serviceAccounts: [],
    creationTime: "",
    kubernetesType: "ClusterIP",
    clusterId: "Kubernetes",
    externalName: "",
    externalAddresses: [],
    nodeLocal: false,
    publishNotReadyAddresses: false,
    ...fields,
  };
}
