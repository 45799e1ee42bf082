// Config objects typed by kind. What reaches the store was admitted against its kind's schema, so an
// object of a kind KindObjects types is that kind's typed object: readers narrow by kind key, not by cast.
// Kubernetes built-ins are not admitted against a schema here; their few readers go through the
// accessors below, the one place that takes the API server's validation on trust.
import type { V1PodSpec, V1ServiceSpec } from "@kubernetes/client-node";
import type { ConfigObject } from "./model.ts";
import { kindKeyOf } from "./object-key.ts";
import type { KindObjects } from "./types/kind-objects.gen.ts";

/** Whether `obj` is of the kind `key` ("group/Kind", see kindKey), as that kind's typed object. */
export function isKind<K extends keyof KindObjects>(obj: ConfigObject, key: K): obj is KindObjects[K] {
  return kindKeyOf(obj) === key;
}

/** The spec of a Kubernetes Service, as the API server validated it (Sluice has no schema for built-ins). */
export function serviceSpecOf(service: ConfigObject | undefined): V1ServiceSpec | undefined {
  return service?.spec as V1ServiceSpec | undefined;
}

/** The spec of a Kubernetes Pod, as the API server validated it (Sluice has no schema for built-ins). */
export function podSpecOf(pod: ConfigObject): V1PodSpec | undefined {
  return pod.spec as V1PodSpec | undefined;
}
