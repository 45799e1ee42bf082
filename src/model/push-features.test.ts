import assert from "node:assert/strict";
import { test } from "node:test";
import { pushFeaturesFromEnv } from "./push-features.ts";

test("feature flags default as istiod's: mongo_proxy on, redis/mysql filters and QUIC listeners off, XDS cache and IP autoallocation on; VHDS, the alpha Gateway API and the inference extension off", () => {
  assert.deepEqual(pushFeaturesFromEnv({}), {
    persistentSessions: false,
    scopeGatewayToNamespace: false,
    mongoFilter: true,
    redisFilter: false,
    mysqlFilter: false,
    quicListeners: false,
    vhds: false,
    xdsCache: true,
    ipAutoallocate: true,
    alphaGatewayApi: false,
    inferenceExtension: false,
  });
});

test("feature flags are read as Go's ParseBool reads them; an unparsable value keeps the default", () => {
  const features = pushFeaturesFromEnv({
    PILOT_ENABLE_MONGO_FILTER: "False",
    PILOT_ENABLE_REDIS_FILTER: "t",
    PILOT_ENABLE_MYSQL_FILTER: "1",
    PILOT_ENABLE_QUIC_LISTENERS: "TRUE",
    PILOT_ENABLE_PERSISTENT_SESSION_FILTER: "yes",
    SLUICE_ENABLE_VHDS: "true",
    PILOT_ENABLE_XDS_CACHE: "false",
    PILOT_ENABLE_IP_AUTOALLOCATE: "0",
    PILOT_ENABLE_ALPHA_GATEWAY_API: "true",
    ENABLE_GATEWAY_API_INFERENCE_EXTENSION: "1",
  });
  assert.equal(features.mongoFilter, false);
  assert.equal(features.redisFilter, true);
  assert.equal(features.mysqlFilter, true);
  assert.equal(features.quicListeners, true);
  assert.equal(features.persistentSessions, false);
  assert.equal(features.vhds, true);
  assert.equal(features.xdsCache, false);
  assert.equal(features.ipAutoallocate, false);
  assert.equal(features.alphaGatewayApi, true);
  assert.equal(features.inferenceExtension, true);
});
