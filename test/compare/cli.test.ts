// The CLI comparison can fail: the same messages compare identical, and a changed level, a message
// only one tool prints, a changed text or a changed verdict of validate are each reported, under
// the (code, resource, level) or resource they concern. No peer program is needed.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type AnalyzeMessage,
  cliReport,
  compareAnalyze,
  compareValidate,
  normalizeOrigin,
  normalizeText,
  parseAnalyzeJson,
  parseIstioctlValidate,
  parseSluiceValidate,
} from "./cli.ts";

const message = (over: Partial<AnalyzeMessage> = {}): AnalyzeMessage => ({
  code: "IST0101",
  level: "Error",
  resource: "VirtualService testns/foo",
  message: 'Referenced gateway not found: "gw"',
  reference: "objects.yaml:12",
  ...over,
});

test("analyze: the same messages are identical; every kind of difference is reported", () => {
  const gateway = message();
  const subset = message({ message: 'Referenced host+subset in destinationrule not found: "c+v2"', reference: "x:20" });
  const warning = message({ code: "IST0132", level: "Warning", message: "one or more host [c.foo] ..." });
  assert.deepEqual(compareAnalyze([gateway, subset, warning], [warning, subset, gateway]), [
    { id: "analyze IST0101 VirtualService testns/foo Error", outcome: "identical" },
    { id: "analyze IST0132 VirtualService testns/foo Warning", outcome: "identical" },
  ]);

  const results = compareAnalyze(
    [gateway, subset, warning, message({ resource: "Gateway testns/gw", code: "IST0145", level: "Warning" })],
    [
      gateway,
      { ...warning, level: "Info" },
      message({ resource: "DestinationRule testns/dr", code: "IST0174", level: "Warning" }),
    ],
  );
  const outcomes = Object.fromEntries(results.map((r) => [r.id, r.outcome]));
  assert.deepEqual(outcomes, {
    // One of the two messages under this key is missing on Sluice's side.
    "analyze IST0101 VirtualService testns/foo Error": "differs",
    "analyze IST0132 VirtualService testns/foo Warning": "only-istiod",
    "analyze IST0132 VirtualService testns/foo Info": "only-sluice",
    "analyze IST0145 Gateway testns/gw Warning": "only-istiod",
    "analyze IST0174 DestinationRule testns/dr Warning": "only-sluice",
  });
  const differs = results.find((r) => r.outcome === "differs");
  assert.match(differs?.detail ?? "", /istiod: Referenced host\+subset .* @ line 20 — sluice: $/);

  // The same key with another text, or at another line, differs.
  assert.equal(
    compareAnalyze([gateway], [{ ...gateway, message: "Referenced gateway not found: x" }])[0].outcome,
    "differs",
  );
  assert.equal(compareAnalyze([gateway], [{ ...gateway, reference: "objects.yaml:13" }])[0].outcome, "differs");

  // istioctl lists some resources in map order: Sluice matching any one of its runs is identical.
  const listed = (order: string) => message({ code: "IST0175", message: `exist (${order})` });
  const runs = [[listed("b, a")], [listed("a, b")]];
  assert.equal(compareAnalyze([listed("a, b")], [listed("a, b")], runs)[0].outcome, "identical");
  assert.equal(compareAnalyze([listed("b, a")], [listed("a, b")], runs)[0].outcome, "identical");
  assert.equal(compareAnalyze([listed("b, a")], [listed("a, b")])[0].outcome, "differs");
  assert.equal(compareAnalyze([listed("b, a")], [listed("c, a")], runs)[0].outcome, "differs");
});

test("analyze output: JSON origins normalize to Kind namespace/name; an empty list is no message", () => {
  const json = JSON.stringify([
    { code: "IST0101", level: "Error", message: "m", origin: "VirtualService foo.bar.testns", reference: "f:3" },
    { code: "IST0101", level: "Error", message: "m", origin: "VirtualService testns/foo" },
    { code: "IST0104", level: "Warning", message: "m", origin: "Gateway gw.unknownns" },
  ]);
  const parsed = parseAnalyzeJson(json, new Set(["testns"]));
  assert.deepEqual(
    parsed.map((m) => m.resource),
    ["VirtualService testns/foo.bar", "VirtualService testns/foo", "Gateway gw.unknownns"],
  );
  assert.equal(parsed[1].reference, "");
  assert.deepEqual(parseAnalyzeJson("[]\n"), []);
  // The docs version in istio.io links is presentation; the rest of the link is not.
  assert.equal(normalizeText("See https://istio.io/v1.31/docs/x/"), "See https://istio.io/latest/docs/x/");
  assert.equal(normalizeText("See https://istio.io/latest/docs/y/"), "See https://istio.io/latest/docs/y/");
  assert.equal(normalizeOrigin("Namespace testns", new Set(["testns"])), "Namespace testns");
});

test("validate: istioctl's report and Sluice's JSON compare per resource", () => {
  const istioctl = parseIstioctlValidate(
    [
      `"objects.yaml" has warnings: `,
      "\t* DestinationRule/testns/dr: deprecated thing",
      "",
      `deployment "web/testns:" may not provide Istio metrics and telemetry labels: "map[]". See URL`,
      "Error: 2 errors occurred:",
      '\t* VirtualService/testns/ws: cannot parse proto message: unknown field "x" in istio.networking.v1alpha3.HTTPRoute',
      "\t* Service/testns/svc: service has an unnamed port",
      "",
    ].join("\n"),
  );
  assert.deepEqual(istioctl.get("VirtualService testns/ws"), {
    valid: false,
    errors: ['cannot parse proto message: unknown field "x" in istio.networking.v1alpha3.HTTPRoute'],
    warnings: [],
  });
  assert.deepEqual(istioctl.get("DestinationRule testns/dr"), {
    valid: true,
    errors: [],
    warnings: ["deprecated thing"],
  });
  assert.equal(istioctl.get("Deployment testns/web")?.warnings.length, 1);

  const doc = (kind: string, name: string, valid: boolean, errors: string[], warnings: string[] = []) => ({
    kind,
    namespace: "testns",
    name,
    valid,
    errors,
    warnings,
  });
  const sluice = parseSluiceValidate(
    JSON.stringify([
      // The same error after Sluice's field path: identical.
      doc("VirtualService", "ws", false, [
        'spec.http[0]: cannot parse proto message: unknown field "x" in istio.networking.v1alpha3.HTTPRoute',
      ]),
      // Another text: differs.
      doc("Service", "svc", false, ["spec.ports[0]: unnamed port"]),
      // Valid without the warning istioctl gives: only istiod said something.
      doc("DestinationRule", "dr", true, []),
      // An error istioctl does not give: only Sluice.
      doc("Gateway", "gw", false, ["spec.servers: bad"]),
      doc("Deployment", "web", true, [], ['may not provide Istio metrics and telemetry labels: "map[]". See URL']),
      doc("Sidecar", "clean", true, []),
    ]),
  );
  const results = compareValidate(
    [
      "VirtualService testns/ws",
      "Service testns/svc",
      "DestinationRule testns/dr",
      "Gateway testns/gw",
      "Deployment testns/web",
      "Sidecar testns/clean",
    ],
    istioctl,
    sluice,
  );
  assert.deepEqual(
    results.map((r) => `${r.id}: ${r.outcome}`),
    [
      "validate VirtualService testns/ws: identical",
      "validate Service testns/svc: differs",
      "validate DestinationRule testns/dr: only-istiod",
      "validate Gateway testns/gw: only-sluice",
      "validate Deployment testns/web: identical",
      "validate Sidecar testns/clean: identical",
    ],
  );
  // A verdict that flips (valid on one side, invalid on the other) with the same texts differs too.
  const flipped = compareValidate(
    ["VirtualService testns/ws"],
    new Map([["VirtualService testns/ws", { valid: true, errors: [], warnings: ["w"] }]]),
    new Map([["VirtualService testns/ws", { valid: false, errors: [], warnings: ["w"] }]]),
  );
  assert.equal(flipped[0].outcome, "differs");
});

test("the report: a line per scenario, the differences under it, and the total", () => {
  const results = new Map([
    [
      "inputs/a",
      [
        { id: "analyze IST0101 VirtualService testns/foo Error", outcome: "identical" as const },
        { id: "validate VirtualService testns/foo", outcome: "only-sluice" as const, detail: "invalid; error: e" },
      ],
    ],
    ["inputs/b", [{ id: "validate Gateway testns/gw", outcome: "identical" as const }]],
  ]);
  assert.deepEqual(cliReport(results), [
    "inputs/a: 1/2 messages identical (analyze 1/1, validate 0/1)",
    "  only-sluice: validate VirtualService testns/foo: invalid; error: e",
    "inputs/b: 1/1 messages identical (validate 1/1)",
    "cli: 2/3 messages identical",
  ]);
  assert.deepEqual(cliReport(results, false), [
    "inputs/a: 1/2 messages identical (analyze 1/1, validate 0/1)",
    "inputs/b: 1/1 messages identical (validate 1/1)",
    "cli: 2/3 messages identical",
  ]);
});
