// Config types Sluice sends as TypedStruct because their protos are not among its generated bindings:
// Istio's own istio-proxy filters, which istiod sends as TypedStruct too. The constraint checker cannot
// know them; tests accept exactly these (see pgv.ts).
export const PEER_METADATA_TYPE_URL = "type.googleapis.com/io.istio.http.peer_metadata.Config";
export const TCP_METADATA_EXCHANGE_TYPE_URL = "type.googleapis.com/envoy.tcp.metadataexchange.config.MetadataExchange";

export const TYPED_STRUCT_ONLY_TYPE_URLS: ReadonlySet<string> = new Set([
  PEER_METADATA_TYPE_URL,
  TCP_METADATA_EXCHANGE_TYPE_URL,
]);
