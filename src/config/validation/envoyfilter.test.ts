import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { corpusDocuments, runSemantic } from "../../../test/support/validation.ts";
import { registry } from "../../api/index.ts";
import type { Issue } from "../model.ts";
import { validateEnvoyFilter } from "./envoyfilter.ts";
import { PATCH_MESSAGE_TYPES } from "./envoyfilter-patch.ts";
import { DEFAULT_CONTEXT, Findings } from "./findings.ts";

const ALWAYS =
  "EnvoyFilter exposes internal implementation details that may change at any time. Prefer other APIs if possible, and exercise extreme caution, especially around upgrades.";

function run(spec: unknown) {
  return runSemantic(validateEnvoyFilter, spec, { kind: "EnvoyFilter", apiVersion: "networking.istio.io/v1alpha3" });
}

function messages(issues: Issue[]): string[] {
  return issues.map((i) => i.message);
}

/** One config patch; `patch` fields override a valid MERGE of a cluster. */
function onePatch(cp: Record<string, unknown>) {
  return run({ configPatches: [cp] });
}

const clusterMerge = { applyTo: "CLUSTER", patch: { operation: "MERGE", value: { name: "c" } } };

describe("EnvoyFilter webhook validation", () => {
  test("EnvoyFilter: every object gets the internal-details warning", () => {
    const r = onePatch(clusterMerge);
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.warnings, [{ path: "spec", message: ALWAYS }]);
  });

  test("EnvoyFilter: workloadSelector label errors are returned alone", () => {
    const r = run({ workloadSelector: { labels: { app: "*" } }, configPatches: [null] });
    assert.deepEqual(r.errors, [
      { path: "spec.workloadSelector.labels", message: 'wildcard is not supported in selector: "app=*"' },
    ]);
    assert.deepEqual(r.warnings, []);
  });

  test("EnvoyFilter: workloadSelector without labels is a warning", () => {
    const r = run({ workloadSelector: {}, configPatches: [clusterMerge] });
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.warnings[1], {
      path: "spec.workloadSelector",
      message: "Envoy filter: workload selector specified without labels, will be applied to all services in namespace",
    });
  });

  test("EnvoyFilter: null config patch", () => {
    assert.deepEqual(run({ configPatches: [null, clusterMerge] }).errors, [
      { path: "spec.configPatches[0]", message: "Envoy filter: null config patch" },
    ]);
  });

  test("EnvoyFilter: patches with context WAYPOINT are not validated", () => {
    assert.deepEqual(onePatch({ match: { context: "WAYPOINT" } }).errors, []);
  });

  test("EnvoyFilter: applyTo, patch, operation and value are required, in that order", () => {
    assert.deepEqual(onePatch({ patch: { operation: "MERGE" } }).errors, [
      { path: "spec.configPatches[0].applyTo", message: "Envoy filter: missing applyTo" },
    ]);
    assert.deepEqual(messages(onePatch({ applyTo: "CLUSTER" }).errors), ["Envoy filter: missing patch"]);
    assert.deepEqual(onePatch({ applyTo: "CLUSTER", patch: { value: {} } }).errors, [
      { path: "spec.configPatches[0].patch.operation", message: "Envoy filter: missing patch operation" },
    ]);
    assert.deepEqual(messages(onePatch({ applyTo: "CLUSTER", patch: { operation: "ADD" } }).errors), [
      "Envoy filter: missing patch value for non-remove operation",
    ]);
    assert.deepEqual(onePatch({ applyTo: "CLUSTER", patch: { operation: "REMOVE" } }).errors, []);
  });

  test("EnvoyFilter: enums decode from names or numbers; unknown names fail decoding", () => {
    assert.deepEqual(onePatch({ applyTo: 8, patch: { operation: 3 } }).errors, []);
    assert.deepEqual(onePatch({ applyTo: "CLUSTERS", patch: { operation: "REMOVE" } }).errors, [
      {
        path: "spec.configPatches[0].applyTo",
        message: 'unknown value "\\"CLUSTERS\\"" for enum istio.networking.v1alpha3.EnvoyFilter.ApplyTo',
      },
    ]);
  });

  test("EnvoyFilter: proxyVersion must be an RE2 regex; over 1024 characters it is ignored with a warning", () => {
    const bad = onePatch({ ...clusterMerge, match: { proxy: { proxyVersion: "1.(2" } } });
    assert.equal(bad.errors.length, 1);
    assert.match(
      bad.errors[0].message,
      /^Envoy filter: invalid regex for proxy version, \[error parsing regexp: .*\]$/,
    );
    const long = onePatch({ ...clusterMerge, match: { proxy: { proxyVersion: "x".repeat(1025) } } });
    assert.deepEqual(long.errors, []);
    assert.ok(
      long.warnings.some(
        (w) => w.message === "Envoy filter: proxyVersion match exceeds 1024 characters and will be ignored",
      ),
    );
  });

  test("EnvoyFilter: listener-class applyTo needs a listener match", () => {
    const r = onePatch({
      applyTo: "HTTP_FILTER",
      match: { cluster: {} },
      patch: { operation: "ADD", value: { name: "x", typed_config: {} } },
    });
    assert.deepEqual(r.errors, [
      {
        path: "spec.configPatches[0].match",
        message: "Envoy filter: applyTo for listener class objects cannot have non listener match",
      },
    ]);
  });

  test("EnvoyFilter: filter match rules (name, subFilter only for HTTP_FILTER under the HCM, subFilter name)", () => {
    const listener = (filter: unknown) => ({ listener: { filterChain: { filter } } });
    const remove = { operation: "REMOVE" };
    const cases: [string, unknown, string][] = [
      ["NETWORK_FILTER", {}, "Envoy filter: filter match has no name to match on"],
      [
        "NETWORK_FILTER",
        { name: "envoy.filters.network.http_connection_manager", subFilter: { name: "r" } },
        "Envoy filter: subfilter match can be used with applyTo HTTP_FILTER only",
      ],
      [
        "HTTP_FILTER",
        { name: "envoy.filters.network.tcp_proxy", subFilter: { name: "r" } },
        "Envoy filter: subfilter match requires filter match with envoy.filters.network.http_connection_manager",
      ],
      [
        "HTTP_FILTER",
        { name: "envoy.filters.network.http_connection_manager", subFilter: {} },
        "Envoy filter: subfilter match has no name to match on",
      ],
    ];
    for (const [applyTo, filter, message] of cases) {
      assert.deepEqual(messages(onePatch({ applyTo, match: listener(filter), patch: remove }).errors), [message]);
    }
    const withListener = onePatch({ applyTo: "LISTENER", match: listener({ name: "x" }), patch: remove });
    assert.deepEqual(withListener.warnings[1], {
      path: "spec.configPatches[0].match.listener.filterChain.filter",
      message: "Envoy filter: filter match has no effect when used with LISTENER",
    });
  });

  test("EnvoyFilter: deprecated filter names in matches are warnings", () => {
    const r = onePatch({
      applyTo: "HTTP_FILTER",
      match: {
        listener: {
          filterChain: { filter: { name: "envoy.http_connection_manager", subFilter: { name: "envoy.router" } } },
        },
      },
      patch: { operation: "REMOVE" },
    });
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.warnings.slice(1), [
      {
        path: "spec.configPatches[0].match.listener.filterChain.filter.name",
        message:
          'using deprecated filter name "envoy.http_connection_manager"; use "envoy.filters.network.http_connection_manager" instead',
      },
      {
        path: "spec.configPatches[0].match.listener.filterChain.filter.subFilter.name",
        message: 'using deprecated filter name "envoy.router"; use "envoy.filters.http.router" instead',
      },
    ]);
  });

  test("EnvoyFilter: route-class and cluster applyTo need matching match objects", () => {
    assert.deepEqual(
      messages(onePatch({ applyTo: "VIRTUAL_HOST", match: { cluster: {} }, patch: { operation: "REMOVE" } }).errors),
      ["Envoy filter: applyTo for http route class objects cannot have non route configuration match"],
    );
    assert.deepEqual(
      messages(onePatch({ applyTo: "CLUSTER", match: { listener: {} }, patch: { operation: "REMOVE" } }).errors),
      ["Envoy filter: applyTo for cluster class objects cannot have non cluster match"],
    );
  });

  test("EnvoyFilter: the patch value must decode as the applyTo's Envoy message", () => {
    const r = onePatch({ applyTo: "CLUSTER", patch: { operation: "ADD", value: { name: 5 } } });
    assert.equal(r.errors.length, 1);
    assert.equal(r.errors[0].path, "spec.configPatches[0].patch.value");
    assert.match(r.errors[0].message, /^Envoy filter: .*envoy\.config\.cluster\.v3\.Cluster\.name/);
  });

  test("EnvoyFilter: Durations in patch values are read as Go durations", () => {
    const cluster = (value: Record<string, unknown>) =>
      onePatch({ applyTo: "CLUSTER", patch: { operation: "ADD", value } });
    assert.deepEqual(cluster({ name: "c", dns_refresh_rate: "500ms", connectTimeout: "1m30s" }).errors, []);
    assert.deepEqual(messages(cluster({ name: "c", dns_refresh_rate: "5 seconds" }).errors), [
      'Envoy filter: bad Duration: time: unknown unit " seconds" in duration "5 seconds"',
    ]);
  });

  test("EnvoyFilter: unknown enum names in patch values fail decoding", () => {
    const r = onePatch({ applyTo: "CLUSTER", patch: { operation: "ADD", value: { name: "c", lb_policy: "FASTEST" } } });
    assert.deepEqual(messages(r.errors), [
      'Envoy filter: unknown value "\\"FASTEST\\"" for enum envoy.config.cluster.v3.Cluster.LbPolicy',
    ]);
  });

  test("EnvoyFilter: nested typed configs are decoded with their own types", () => {
    const hcm = (extra: Record<string, unknown>) =>
      onePatch({
        applyTo: "NETWORK_FILTER",
        patch: {
          operation: "MERGE",
          value: {
            name: "envoy.filters.network.http_connection_manager",
            typed_config: {
              "@type":
                "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
              stream_idle_timeout: "90s",
              ...extra,
            },
          },
        },
      });
    assert.deepEqual(hcm({}).errors, []);
    assert.deepEqual(messages(hcm({ codec_type: "HTTP9" }).errors), [
      'Envoy filter: unknown value "\\"HTTP9\\"" for enum envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.CodecType',
    ]);
  });

  test("EnvoyFilter: each patch is checked on its own", () => {
    const r = run({
      configPatches: [
        { applyTo: "CLUSTER", patch: { operation: "ADD", value: { name: 1 } } },
        { applyTo: "CLUSTER", patch: { operation: "ADD", value: { name: 2 } } },
      ],
    });
    assert.deepEqual(
      r.errors.map((e) => e.path),
      ["spec.configPatches[0].patch.value", "spec.configPatches[1].patch.value"],
    );
  });

  test("EnvoyFilter: unknown fields in the patch value are errors at their path (Istio only warns)", () => {
    const r = onePatch({ applyTo: "CLUSTER", patch: { operation: "ADD", value: { name: "c", bogus: 1 } } });
    assert.deepEqual(r.errors, [
      {
        path: "spec.configPatches[0].patch.value.bogus",
        message: 'Envoy filter: unknown field "bogus" in envoy.config.cluster.v3.Cluster',
      },
    ]);
    const nested = onePatch({
      applyTo: "NETWORK_FILTER",
      patch: {
        operation: "MERGE",
        value: {
          typed_config: {
            "@type":
              "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
            httpFilters: [{ name: "a" }, { name: "b", typo: true }],
          },
        },
      },
    });
    assert.deepEqual(
      nested.errors.map((e) => e.path),
      ["spec.configPatches[0].patch.value.typed_config.httpFilters[1].typo"],
    );
  });

  test("EnvoyFilter: a whole value Envoy would reject is an error at its proto field path", () => {
    const r = onePatch({
      applyTo: "HTTP_ROUTE",
      patch: { operation: "INSERT_FIRST", value: { name: "r", route: { cluster: "" } } },
    });
    assert.deepEqual(
      r.errors.map((e) => e.path),
      ["spec.configPatches[0].patch.value.match", "spec.configPatches[0].patch.value.route.cluster"],
    );
    assert.match(r.errors[0].message, /^Envoy filter: Envoy would reject this envoy.config.route.v3.Route: /);
    // A merged value is partial: what it lacks the config merged into may have, but what it sets or
    // appends must be valid.
    const merge = onePatch({
      applyTo: "HTTP_ROUTE",
      patch: { operation: "MERGE", value: { route: { timeout: "5s" } } },
    });
    assert.deepEqual(merge.errors, []);
    const zero = onePatch({
      applyTo: "CLUSTER",
      patch: {
        operation: "MERGE",
        value: { connectTimeout: "0s", circuitBreakers: { thresholds: [{ priority: "HIGH" }] }, outlierDetection: {} },
      },
    });
    assert.deepEqual(
      zero.errors.map((e) => e.path),
      ["spec.configPatches[0].patch.value.connect_timeout"],
    );
    const item = onePatch({
      applyTo: "LISTENER",
      patch: {
        operation: "MERGE",
        value: {
          listenerFilters: [
            {
              typedConfig: {
                "@type": "type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector",
              },
            },
          ],
        },
      },
    });
    assert.deepEqual(
      item.errors.map((e) => e.path),
      ["spec.configPatches[0].patch.value.listener_filters[0].name"],
    );
  });

  test("EnvoyFilter: unresolvable Any types are rejected (v2 types with a hint)", () => {
    const filter = (type: string) =>
      onePatch({
        applyTo: "HTTP_FILTER",
        patch: { operation: "ADD", value: { name: "f", typed_config: { "@type": `type.googleapis.com/${type}` } } },
      });
    assert.deepEqual(messages(filter("envoy.config.filter.http.lua.v2.Lua").errors), [
      "referenced type unknown (hint: try using the v3 XDS API): Envoy filter: could not resolve Any message type: type.googleapis.com/envoy.config.filter.http.lua.v2.Lua",
    ]);
    assert.deepEqual(messages(filter("example.com.Nope").errors), [
      "referenced type unknown: Envoy filter: could not resolve Any message type: type.googleapis.com/example.com.Nope",
    ]);
    assert.deepEqual(filter("envoy.extensions.filters.http.router.v3.Router").errors, []);
  });

  test("EnvoyFilter: Envoy types istiod knows but Sluice does not generate are admitted with a warning", () => {
    const r = onePatch({
      applyTo: "HTTP_FILTER",
      patch: {
        operation: "ADD",
        value: {
          name: "f",
          typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.buffer.v3.Buffer" },
        },
      },
    });
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.warnings[1], {
      path: "spec.configPatches[0].patch.value",
      message:
        "Envoy filter: type type.googleapis.com/envoy.extensions.filters.http.buffer.v3.Buffer is not known to Sluice; its value is not checked",
    });
  });

  test("EnvoyFilter: Lua and the network local rate limit are checked (the commonest EnvoyFilter patches)", () => {
    const patch = (applyTo: string, value: unknown) => onePatch({ applyTo, patch: { operation: "ADD", value } });
    const lua = (config: unknown) =>
      patch("HTTP_FILTER", {
        name: "envoy.filters.http.lua",
        typed_config: {
          "@type": "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua",
          ...(config as object),
        },
      });
    const ok = lua({ default_source_code: { inline_string: "function envoy_on_request(h) end" } });
    assert.deepEqual(ok.errors, []);
    assert.equal(ok.warnings.length, 1); // only EnvoyFilter's own warning
    assert.deepEqual(
      lua({ inlineCode: "x", bogus: 1 }).errors.map((e) => e.message),
      ['Envoy filter: unknown field "bogus" in envoy.extensions.filters.http.lua.v3.Lua'],
    );
    const rateLimit = patch("NETWORK_FILTER", {
      name: "envoy.filters.network.local_ratelimit",
      typed_config: {
        "@type": "type.googleapis.com/envoy.extensions.filters.network.local_ratelimit.v3.LocalRateLimit",
        stat_prefix: "rl",
        token_bucket: { max_tokens: 10, fill_interval: "1s" },
      },
    });
    assert.deepEqual(rateLimit.errors, []);
    assert.equal(rateLimit.warnings.length, 1);
  });

  test("EnvoyFilter: every applyTo has its Envoy message in the proto registry", () => {
    for (const [applyTo, typeName] of Object.entries(PATCH_MESSAGE_TYPES)) {
      assert.ok(registry.getMessage(typeName), applyTo);
    }
  });

  test("EnvoyFilter: filters named without typed_config get a deprecation warning", () => {
    const r = onePatch({
      applyTo: "HTTP_FILTER",
      patch: { operation: "ADD", value: { name: "envoy.filters.http.cors" } },
    });
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.warnings[1], {
      path: "spec.configPatches[0].patch.value",
      message: "using deprecated types by name without typed_config; envoy.filters.http.cors",
    });
  });
});

describe("EnvoyFilter: Istio's CRD-validation corpus", () => {
  function validate(doc: ReturnType<typeof corpusDocuments>[number]) {
    const out = new Findings("spec");
    validateEnvoyFilter(doc, DEFAULT_CONTEXT, out);
    return out.errors;
  }

  test("EnvoyFilter: every envoyfilter-valid.yaml document passes", () => {
    const docs = corpusDocuments("envoyfilter-valid.yaml");
    assert.equal(docs.length, 5);
    for (const doc of docs) assert.deepEqual(validate(doc), [], doc.metadata.name);
  });

  test("EnvoyFilter: of envoyfilter-invalid.yaml the webhook rejects only waypoint-wrong-context (the rest are CRD CEL rules)", () => {
    const rejected = corpusDocuments("envoyfilter-invalid.yaml")
      .filter((doc) => validate(doc).length > 0)
      .map((doc) => doc.metadata.name);
    assert.deepEqual(rejected, ["waypoint-wrong-context"]);
  });
});
