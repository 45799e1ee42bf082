import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runSemantic } from "../../../test/support/validation.ts";
import type { Issue } from "../model.ts";
import { validateVirtualService } from "./virtualservice.ts";

const dest = { destination: { host: "reviews" } };

/** Validates a VirtualService for host `reviews` with the one HTTP route given. */
function route(http: Record<string, unknown>, hosts: string[] = ["reviews"]) {
  return runSemantic(validateVirtualService, { hosts, http: [http] }, { kind: "VirtualService" });
}

function messages(issues: Issue[]): string[] {
  return issues.map((i) => i.message);
}

function errors(http: Record<string, unknown>): string[] {
  return messages(route(http).errors);
}

describe("VirtualService HTTP route conflicts", () => {
  test("VirtualService: a root route that delegates must not redirect or route", () => {
    const r = route({ delegate: { name: "d" }, redirect: { uri: "/x" }, route: [dest] });
    assert.deepEqual(r.errors, [
      { path: "spec.http[0]", message: "root HTTP route  must not specify redirect" },
      { path: "spec.http[0]", message: "root HTTP route  must not specify route" },
    ]);
    assert.deepEqual(errors({ name: "r", delegate: { name: "d" } }), []);
  });

  test("VirtualService: a route inside a delegate VirtualService cannot delegate again", () => {
    const r = route({ delegate: { name: "d" }, route: [dest] }, []);
    assert.deepEqual(messages(r.errors), ["delegate HTTP route cannot contain delegate"]);
  });

  test("VirtualService: redirect excludes route, fault, rewrite and direct_response", () => {
    assert.deepEqual(
      errors({
        redirect: { uri: "/x" },
        route: [dest],
        fault: { abort: { httpStatus: 500 } },
        rewrite: { uri: "/y" },
        directResponse: { status: 200 },
      }),
      [
        "HTTP route cannot contain both route and redirect",
        "HTTP route cannot contain both fault and redirect",
        "HTTP route rule cannot contain both rewrite and redirect",
        "HTTP route rule cannot contain both direct_response and redirect",
      ],
    );
  });

  test("VirtualService: direct_response excludes route, fault and rewrite", () => {
    assert.deepEqual(
      errors({
        directResponse: { status: 200 },
        route: [dest],
        fault: { delay: { fixedDelay: "1s" } },
        rewrite: { uri: "/y" },
      }),
      [
        "HTTP route cannot contain both route and direct_response",
        "HTTP route cannot contain both fault and direct_response",
        "HTTP route rule cannot contain both rewrite and direct_response",
      ],
    );
  });

  test("VirtualService: a route needs route, redirect or direct_response; an empty route list counts as none", () => {
    assert.deepEqual(errors({ route: [] }), ["HTTP route, redirect or direct_response is required"]);
  });

  test("VirtualService: mirror and mirrors are exclusive", () => {
    assert.deepEqual(errors({ route: [dest], mirror: { host: "a" }, mirrors: [{ destination: { host: "b" } }] }), [
      "HTTP route cannot contain both mirror and mirrors",
    ]);
  });
});

describe("VirtualService HTTP matches", () => {
  const withMatch = (match: Record<string, unknown>) => route({ match: [match], route: [dest] });

  test("VirtualService: header matches may not be null and need valid names", () => {
    assert.deepEqual(withMatch({ headers: { "x-a": null, "bad header": { exact: "v" } } }).errors, [
      { path: "spec.http[0].match[0].headers.x-a", message: "header match x-a cannot be null" },
      {
        path: "spec.http[0].match[0].headers.bad header",
        message: "header name bad header is not a valid header name",
      },
    ]);
  });

  test("VirtualService: string matches reject an empty prefix or regex and non-RE2 regexes", () => {
    assert.deepEqual(messages(withMatch({ headers: { a: { prefix: "" } } }).errors), [
      '"headers": prefix string match should not be empty',
    ]);
    assert.deepEqual(messages(withMatch({ method: { regex: "" } }).errors), [
      '"method": regex string match should not be empty',
    ]);
    const re = withMatch({ queryParams: { q: { regex: "(?=x)" } } });
    assert.equal(re.errors[0].path, "spec.http[0].match[0].queryParams.q");
    assert.match(
      re.errors[0].message,
      /^"queryParams": error parsing regexp: .*; Istio uses RE2 style regex-based match/,
    );
  });

  test("VirtualService: uri allows an empty prefix; withoutHeaders allows the presence regex *", () => {
    assert.deepEqual(withMatch({ uri: { prefix: "" }, withoutHeaders: { a: { regex: "*" } } }).errors, []);
  });

  test("VirtualService: match port, sourceLabels, gateways and sourceNamespace", () => {
    assert.deepEqual(
      withMatch({ port: 70000, sourceLabels: { "a b": "c" }, gateways: ["ns/Bad_Name"], sourceNamespace: "Not_Valid" })
        .errors,
      [
        { path: "spec.http[0].match[0].port", message: "port number 70000 must be in the range 1..65535" },
        { path: "spec.http[0].match[0].sourceLabels", message: 'invalid tag key: "a b"' },
        { path: "spec.http[0].match[0].gateways", message: 'invalid value for gateway name: "Bad_Name"' },
        { path: "spec.http[0].match[0].sourceNamespace", message: "sourceNamespace match Not_Valid is invalid" },
      ],
    );
  });

  test("VirtualService: the snake_case proto names are read too", () => {
    assert.deepEqual(messages(withMatch({ source_namespace: "Not_Valid" }).errors), [
      "sourceNamespace match Not_Valid is invalid",
    ]);
  });
});

describe("VirtualService HTTP header operations", () => {
  test("VirtualService: request add/set may not use pseudo-headers other than the authority", () => {
    const r = route({
      route: [dest],
      headers: { request: { set: { ":path": "/x", ":authority": "a" }, add: { "": "v" } } },
    });
    assert.deepEqual(messages(r.errors), [
      "header name cannot be empty",
      'invalid header ":path": header cannot have ":" prefix',
    ]);
  });

  test("VirtualService: request remove and response operations may not touch Host", () => {
    const r = route({
      route: [dest],
      headers: { request: { remove: ["Host"] }, response: { set: { ":status": "1" } } },
    });
    assert.deepEqual(r.errors, [
      { path: "spec.http[0].headers.request.remove[0]", message: 'invalid header "Host": cannot set Host header' },
      {
        path: "spec.http[0].headers.response.set.:status",
        message: 'invalid header ":status": header cannot have ":" prefix',
      },
    ]);
  });

  test("VirtualService: header values follow Envoy's %VARIABLE% syntax", () => {
    assert.deepEqual(errors({ route: [dest], headers: { response: { add: { a: "100%%", b: "%HOSTNAME%" } } } }), []);
    assert.deepEqual(errors({ route: [dest], headers: { response: { add: { a: "abc%" } } } }), [
      "header value configuration: invalid header configuration. Un-escaped %",
    ]);
  });

  test("VirtualService: per-destination header operations are checked", () => {
    assert.deepEqual(errors({ route: [{ ...dest, headers: { request: { remove: ["host"] } } }] }), [
      'invalid header "host": cannot set Host header',
    ]);
  });

  test("VirtualService: the authority may be rewritten in one place only", () => {
    const r = route({ route: [dest], rewrite: { authority: "a" }, headers: { request: { set: { host: "b" } } } });
    assert.deepEqual(r.errors, [
      {
        path: "spec.http[0].headers.request.set.host",
        message: 'authority header cannot be set multiple times: have "a", attempting to set "b"',
      },
    ]);
  });
});

describe("VirtualService CORS policy", () => {
  const cors = (corsPolicy: Record<string, unknown>) => errors({ route: [dest], corsPolicy });

  test("VirtualService: CORS allow origins need a non-empty match", () => {
    assert.deepEqual(
      cors({ allowOrigins: [{ exact: "" }, { regex: "[" }] })[0],
      "'' is not a valid match type for CORS allow origins",
    );
    assert.match(cors({ allowOrigins: [{ regex: "[" }] })[0], /^"corsPolicy.allowOrigins": error parsing regexp/);
  });

  test("VirtualService: CORS methods are a fixed, case-sensitive set; header names are tokens or *", () => {
    assert.deepEqual(cors({ allowMethods: ["GET", "get"], allowHeaders: ["*", "x y"], exposeHeaders: [""] }), [
      '"get" is not a supported HTTP method',
      "header name x y is not a valid header name",
      "header name cannot be empty",
    ]);
  });

  test("VirtualService: CORS maxAge is a duration of whole seconds", () => {
    assert.deepEqual(cors({ maxAge: "1500ms" }), ["max_age duration is accurate only to seconds precision"]);
    assert.deepEqual(cors({ maxAge: "0s" }), ["duration must be greater than 1ms"]);
    assert.deepEqual(cors({ maxAge: "24h" }), []);
  });

  test("VirtualService: unknown enum names fail decoding", () => {
    assert.deepEqual(cors({ unmatchedPreflights: "DROP" }), [
      'unknown value "\\"DROP\\"" for enum istio.networking.v1alpha3.CorsPolicy.UnmatchedPreflights',
    ]);
  });
});

describe("VirtualService fault injection", () => {
  const fault = (f: Record<string, unknown>) => route({ route: [dest], fault: f });

  test("VirtualService: a fault needs an abort or a delay", () => {
    assert.deepEqual(messages(fault({}).errors), ["HTTP fault injection must have an abort and/or a delay"]);
  });

  test("VirtualService: abort error types (gRPC status names, no HTTP/2 errors, HTTP status 200..600)", () => {
    assert.deepEqual(messages(fault({ abort: { grpcStatus: "NOPE" } }).errors), [
      `gRPC status "NOPE" is not supported. See https://github.com/grpc/grpc/blob/master/doc/statuscodes.md for a list of supported codes, for example 'NOT_FOUND'`,
    ]);
    assert.deepEqual(messages(fault({ abort: { http2Error: "x" } }).errors), [
      "HTTP/2 abort fault injection not supported yet",
    ]);
    assert.deepEqual(fault({ abort: { httpStatus: 601 } }).errors, [
      { path: "spec.http[0].fault.abort.httpStatus", message: "HTTP status 601 is not in range 200-599" },
    ]);
    assert.deepEqual(fault({ abort: { httpStatus: 600, percentage: { value: 50 } } }).errors, []);
  });

  test("VirtualService: an abort without an error type is a warning", () => {
    const r = fault({ abort: { percentage: { value: 10 } } });
    assert.deepEqual(r.errors, []);
    assert.deepEqual(messages(r.warnings), ["abort configured, but error type not set"]);
  });

  test("VirtualService: fault percentages are 0 or within [0.0001, 100]", () => {
    assert.deepEqual(messages(fault({ delay: { fixedDelay: "1s", percentage: { value: 101 } } }).errors), [
      "percentage 101 is neither 0.0, nor in range [0.0001, 100.0]",
    ]);
  });

  test("VirtualService: delays are durations; exponentialDelay is not supported", () => {
    assert.deepEqual(messages(fault({ delay: { fixedDelay: "1.5ms" } }).errors), [
      "only durations to ms precision are supported",
    ]);
    assert.deepEqual(messages(fault({ delay: { exponentialDelay: "1s" } }).errors), [
      "exponentialDelay not supported yet",
    ]);
    assert.deepEqual(messages(fault({ delay: { fixedDelay: "1 s" } }).errors), [
      'bad Duration: time: unknown unit " s" in duration "1 s"',
    ]);
  });
});

describe("VirtualService mirrors", () => {
  test("VirtualService: deprecated mirrorPercent warns and is capped at 100", () => {
    const r = route({ route: [dest], mirror: { host: "m" }, mirrorPercent: 101 });
    assert.deepEqual(messages(r.errors), ["mirror_percent must have a max value of 100 (it has 101)"]);
    assert.deepEqual(messages(r.warnings), [
      'using deprecated setting "mirrorPercent", use "mirrorPercentage" instead',
    ]);
  });

  test("VirtualService: mirrorPercentage must be within 0..100", () => {
    assert.deepEqual(errors({ route: [dest], mirrorPercentage: { value: 100.5 } }), [
      "mirror_percentage must have a max value of 100 (it has 100.500000)",
    ]);
    assert.deepEqual(errors({ route: [dest], mirrorPercentage: { value: -1 } }), [
      "mirror_percentage must have a min value of 0 (it has -1.000000)",
    ]);
  });

  test("VirtualService: each mirror needs a valid destination and a percentage within 0..100", () => {
    const r = route({
      route: [dest],
      mirrors: [null, {}, { destination: { host: "*" } }, { destination: { host: "m" }, percentage: { value: 200 } }],
    });
    assert.deepEqual(r.errors, [
      { path: "spec.http[0].mirrors[0]", message: "mirror cannot be null" },
      { path: "spec.http[0].mirrors[1]", message: "destination is required for mirrors" },
      { path: "spec.http[0].mirrors[2].destination.host", message: "invalid destination host *" },
      {
        path: "spec.http[0].mirrors[3].percentage",
        message: "mirror percentage must have a max value of 100 (it has 200.000000)",
      },
    ]);
  });
});

describe("VirtualService redirect and direct response", () => {
  test("VirtualService: redirect reports only its first problem", () => {
    const redirect = (r: Record<string, unknown>, match?: unknown[]) => errors({ redirect: r, match });
    assert.deepEqual(redirect({ uri: "/a", prefixRewrite: "/b", redirectCode: 200 }), [
      "redirect may only specify one of uri or prefix_rewrite",
    ]);
    assert.deepEqual(redirect({ prefixRewrite: "/b" }, [{ uri: { exact: "/a" } }]), [
      "redirect prefix_rewrite requires all URI matches to use prefix match type",
    ]);
    assert.deepEqual(redirect({ redirectCode: 301 }), ["redirect must specify URI, authority, scheme, or port"]);
    assert.deepEqual(redirect({ uri: "/a", redirectCode: 200 }), ["200 is not a valid redirect code, must be 3xx"]);
    assert.deepEqual(redirect({ scheme: "ftp" }), ['invalid redirect scheme, must be "http" or "https"']);
    assert.deepEqual(redirect({ port: 70000 }), ["port number 70000 must be in the range 1..65535"]);
    assert.deepEqual(redirect({ derivePort: "FROM_REQUEST_PORT" }), []);
  });

  test("VirtualService: direct responses need an HTTP status; large bodies warn, over 1MB fail", () => {
    assert.deepEqual(errors({ directResponse: {} }), ["HTTP status 0 is not in range 200-599"]);
    const big = route({ directResponse: { status: 200, body: { string: "x".repeat(200 * 1024) } } });
    assert.deepEqual(messages(big.warnings), ["large direct_responses may impact control plane performance"]);
    const huge = Buffer.alloc(1024 * 1024 + 1).toString("base64");
    assert.deepEqual(errors({ directResponse: { status: 200, body: { bytes: huge } } }), [
      "large direct_responses may impact control plane performance, must be less than 1MB",
    ]);
  });
});

describe("VirtualService retries, rewrite, destinations and timeout", () => {
  const retries = (r: Record<string, unknown>) => errors({ route: [dest], retries: r });

  test("VirtualService: retry attempts may not be negative, and 0 attempts take no other settings", () => {
    assert.deepEqual(retries({ attempts: -1 }), ["attempts cannot be negative"]);
    assert.deepEqual(retries({ attempts: 0, retryRemoteLocalities: false }), [
      "http retry policy configured when attempts are set to 0 (disabled)",
    ]);
  });

  test("VirtualService: retryOn items are Envoy policies or named HTTP status codes", () => {
    assert.deepEqual(retries({ attempts: 3, retryOn: "5xx,503,gateway-error,unavailable" }), []);
    assert.deepEqual(retries({ attempts: 3, retryOn: "5xx, reset,299" }), [
      '" reset" is not a valid retryOn policy',
      '"299" is not a valid retryOn policy',
    ]);
  });

  test("VirtualService: retry perTryTimeout and backoff are durations", () => {
    assert.deepEqual(retries({ attempts: 3, perTryTimeout: "0s", backoff: "1.0001s" }), [
      "duration must be greater than 1ms",
      "only durations to ms precision are supported",
    ]);
  });

  test("VirtualService: rewrite needs one of uri, uriRegexRewrite or authority, not uri with uriRegexRewrite", () => {
    const rewrite = (r: Record<string, unknown>) => errors({ route: [dest], rewrite: r });
    assert.deepEqual(rewrite({ uri: "/a", uriRegexRewrite: { match: "a", rewrite: "b" } }), [
      "rewrite may only contain one of URI or UriRegexRewrite",
    ]);
    assert.deepEqual(rewrite({}), [
      "rewrite must specify at least one of URI, UriRegexRewrite, or authority. Only one of URI or UriRegexRewrite may be specified",
    ]);
    assert.deepEqual(rewrite({ uriRegexRewrite: { match: "a" } }), [
      "UriRegexRewrite has errors\nUriRegexRewrite requires both Rewrite and Match fields to be specified",
    ]);
    assert.match(
      rewrite({ uriRegexRewrite: { match: "(", rewrite: "b" } })[0],
      /^UriRegexRewrite has errors\n"HTTPRewrite.UriRegexRewrite.Match": error parsing regexp/,
    );
  });

  test("VirtualService: route destinations (nil, missing destination, negative weight, all-zero weights)", () => {
    const r = route({ route: [null, { weight: 0 }, { destination: { host: "a" }, weight: -1 }] });
    assert.deepEqual(r.errors, [
      { path: "spec.http[0].route[0]", message: "weight may not be nil" },
      { path: "spec.http[0].route[1]", message: "destination is required" },
      { path: "spec.http[0].route[2].weight", message: "weight -1 < 0" },
    ]);
    assert.deepEqual(route({ route: [dest, dest] }).errors, [
      { path: "spec.http[0].route", message: "total destination weight = 0" },
    ]);
  });

  test("VirtualService: weights need not sum to 100", () => {
    assert.deepEqual(
      errors({
        route: [
          { ...dest, weight: 30 },
          { destination: { host: "b" }, weight: 30 },
        ],
      }),
      [],
    );
  });

  test("VirtualService: destinations are checked (host, subset, port)", () => {
    assert.deepEqual(errors({ route: [{ destination: { host: "*", subset: "Bad_Subset", port: {} } }] }), [
      "invalid destination host *",
      "subset name is invalid: Bad_Subset",
      "port number 0 must be in the range 1..65535",
    ]);
  });

  test("VirtualService: timeout is a duration of at least 1ms", () => {
    assert.deepEqual(route({ route: [dest], timeout: "500us" }).errors, [
      { path: "spec.http[0].timeout", message: "duration must be greater than 1ms" },
    ]);
    assert.deepEqual(errors({ route: [dest], timeout: "1h2m3.5s" }), []);
  });
});
