// Protocol-aware network filters of TCP chains (networkfilter.go buildNetworkFiltersStack): mongo
// ports get mongo_proxy before tcp_proxy, mysql ports mysql_proxy, and redis ports redis_proxy in
// place of tcp_proxy (it routes every command to the port's cluster). Each behind its PILOT_* flag.
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { listener, mongoProxy, mysqlProxy, packAny, redisProxy } from "../../api/index.ts";
import type { ServiceProtocol } from "../../registry/index.ts";

export const MONGO_PROXY_FILTER = "envoy.filters.network.mongo_proxy";
export const REDIS_PROXY_FILTER = "envoy.filters.network.redis_proxy";
export const MYSQL_PROXY_FILTER = "envoy.filters.network.mysql_proxy";

/** PILOT_ENABLE_MONGO_FILTER, PILOT_ENABLE_REDIS_FILTER, PILOT_ENABLE_MYSQL_FILTER. */
export interface ProtocolFilters {
  mongo: boolean;
  redis: boolean;
  mysql: boolean;
}

/** Istio's defaults: only the mongo filter is on. */
export const DEFAULT_PROTOCOL_FILTERS: ProtocolFilters = { mongo: true, redis: false, mysql: false };

// Istio's redisOpTimeout.
const REDIS_OP_TIMEOUT = create(DurationSchema, { seconds: 5n });

/**
 * The terminal filters of a TCP chain for a port of `protocol`: `tcpProxy` with the protocol's filter
 * in front of it, or replaced by redis_proxy. `statPrefix` is tcp_proxy's; `cluster` the one redis
 * commands go to (the first of a weighted split, as Istio picks it).
 */
export function protocolFilterStack(
  flags: ProtocolFilters,
  protocol: ServiceProtocol,
  tcpProxy: listener.Filter,
  statPrefix: string,
  cluster: string,
): listener.Filter[] {
  switch (protocol) {
    case "Mongo":
      return flags.mongo ? [mongoFilter(statPrefix), tcpProxy] : [tcpProxy];
    case "Redis":
      return flags.redis ? [redisFilter(statPrefix, cluster)] : [tcpProxy];
    case "MySQL":
      return flags.mysql ? [mysqlFilter(statPrefix), tcpProxy] : [tcpProxy];
    default:
      return [tcpProxy];
  }
}

/** Envoy prefixes the filter's stats with `mongo.<statPrefix>`. */
function mongoFilter(statPrefix: string): listener.Filter {
  const config = create(mongoProxy.MongoProxySchema, { statPrefix });
  return create(listener.FilterSchema, {
    name: MONGO_PROXY_FILTER,
    configType: { case: "typedConfig", value: packAny(mongoProxy.MongoProxySchema, config) },
  });
}

/** Latency in microseconds, a 5s operation timeout, every key prefix to the one cluster. */
function redisFilter(statPrefix: string, cluster: string): listener.Filter {
  const config = create(redisProxy.RedisProxySchema, {
    statPrefix,
    latencyInMicros: true,
    settings: create(redisProxy.RedisProxy_ConnPoolSettingsSchema, { opTimeout: REDIS_OP_TIMEOUT }),
    prefixRoutes: create(redisProxy.RedisProxy_PrefixRoutesSchema, {
      catchAllRoute: create(redisProxy.RedisProxy_PrefixRoutes_RouteSchema, { cluster }),
    }),
  });
  return create(listener.FilterSchema, {
    name: REDIS_PROXY_FILTER,
    configType: { case: "typedConfig", value: packAny(redisProxy.RedisProxySchema, config) },
  });
}

/** Envoy's contrib MySQL proxy: statistics only, under mysql.<statPrefix>. */
function mysqlFilter(statPrefix: string): listener.Filter {
  const config = create(mysqlProxy.MySQLProxySchema, { statPrefix });
  return create(listener.FilterSchema, {
    name: MYSQL_PROXY_FILTER,
    configType: { case: "typedConfig", value: packAny(mysqlProxy.MySQLProxySchema, config) },
  });
}
