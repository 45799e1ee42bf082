// istio.metadata_exchange as a cluster filter (Istio's xdsfilters.TCPClusterMx): on every outbound
// cluster and PassthroughCluster, so TCP peers exchange workload metadata over the
// `istio-peer-exchange` ALPN. Its config type is istio-proxy's own, sent as a TypedStruct.
import { create } from "@bufbuild/protobuf";
import { cluster, preEncoded } from "../../api/index.ts";
import { istioTypedStruct, TCP_METADATA_EXCHANGE_TYPE_URL } from "../httpfilter/index.ts";

export const METADATA_EXCHANGE_CLUSTER_FILTER = "istio.metadata_exchange";

/** Built once and shared by every cluster. */
export const TCP_CLUSTER_METADATA_EXCHANGE: cluster.Filter = preEncoded(
  cluster.FilterSchema,
  create(cluster.FilterSchema, {
    name: METADATA_EXCHANGE_CLUSTER_FILTER,
    typedConfig: istioTypedStruct(TCP_METADATA_EXCHANGE_TYPE_URL, {
      protocol: "istio-peer-exchange",
      enable_discovery: true,
    }),
  }),
);
