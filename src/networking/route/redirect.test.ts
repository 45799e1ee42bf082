import assert from "node:assert/strict";
import { test } from "node:test";
import { runGoldenCase, vhostNamed } from "../../../test/support/route-cases.ts";
import { route } from "../../api/index.ts";
import { translateRedirect } from "./redirect.ts";

function routes() {
  return vhostNamed(runGoldenCase("redirect").get("80"), "web.default.svc.cluster.local:80").routes;
}

function redirectOf(r: route.Route | undefined): route.RedirectAction {
  assert.equal(r?.action.case, "redirect");
  return r?.action.value as route.RedirectAction;
}

test("redirect golden: 301 by default with path and host; operation named after the VirtualService", () => {
  const r = routes()[0];
  const rd = redirectOf(r);
  assert.equal(rd.responseCode, route.RedirectAction_RedirectResponseCode.MOVED_PERMANENTLY);
  assert.deepEqual(rd.pathRewriteSpecifier, { case: "pathRedirect", value: "/new" });
  assert.equal(rd.hostRedirect, "new.example.com");
  assert.equal(r.decorator?.operation, "web:80/old");
});

test("prefixRewrite, 308, https on 443: the default port is dropped", () => {
  const rd = redirectOf(routes()[1]);
  assert.equal(rd.responseCode, route.RedirectAction_RedirectResponseCode.PERMANENT_REDIRECT);
  assert.deepEqual(rd.pathRewriteSpecifier, { case: "prefixRewrite", value: "/v2" });
  assert.deepEqual(rd.schemeRewriteSpecifier, { case: "schemeRedirect", value: "https" });
  assert.equal(rd.portRedirect, 0);
});

test("FROM_REQUEST_PORT uses the listener port (80 on http: dropped); other ports kept", () => {
  assert.equal(redirectOf(routes()[2]).responseCode, route.RedirectAction_RedirectResponseCode.FOUND);
  assert.equal(redirectOf(routes()[2]).portRedirect, 0);
  assert.equal(redirectOf(routes()[3]).portRedirect, 8443);
  assert.equal(redirectOf(routes()[3]).responseCode, route.RedirectAction_RedirectResponseCode.TEMPORARY_REDIRECT);
  assert.equal(translateRedirect({ derivePort: "FROM_REQUEST_PORT" }, 8080, false)?.portRedirect, 8080);
  assert.equal(translateRedirect({ port: 443 }, 8443, true)?.portRedirect, 0);
  assert.equal(translateRedirect({ redirectCode: 305 }, 80, false), undefined);
});

test("direct responses: status with an inline string or bytes body", () => {
  const [tea, bytes, empty] = routes().slice(4);
  assert.equal(tea.action.case, "directResponse");
  const teaAction = tea.action.value as route.DirectResponseAction;
  assert.equal(teaAction.status, 418);
  assert.deepEqual(teaAction.body?.specifier, { case: "inlineString", value: "I'm a teapot" });
  const bytesAction = bytes.action.value as route.DirectResponseAction;
  assert.equal(Buffer.from(bytesAction.body?.specifier.value as Uint8Array).toString(), "hello");
  assert.equal((empty.action.value as route.DirectResponseAction).body, undefined);
});
