// What config generation hands the xDS server: named resources, each a message the server encodes
// once per object (so share the object between proxies) or an Any already encoded.
import type { Message } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";

export interface XdsResource {
  name: string;
  /**
   * The resource: a message (encoded once per object by the server, so share the object between
   * proxies) or an Any whose `value` is already encoded.
   */
  resource: Message | Any;
  /** Delta xDS version; defaults to a hash of the encoded bytes. */
  version?: string;
  /** Other names the proxy may know it by (delta xDS `aliases`: an on-demand WDS address's IPs). */
  aliases?: readonly string[];
}

/** The names a proxy asks for of one type (xDS's WatchedResource, as config generation reads it). */
export interface RequestedNames {
  /** The names subscribed to; ignored when `wildcard`. */
  readonly resourceNames: ReadonlySet<string>;
  /** The proxy wants every resource of the type (LDS/CDS with no names, or `*`). */
  readonly wildcard: boolean;
}
