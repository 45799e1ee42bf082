// istiod's IsMine over a fixed state: tags of webhooks and Services, the namespace's label when the
// object has none, and the default tag / default revision rule for unlabelled objects.
import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_TAG_WEBHOOK, isMineIn } from "./tag-watcher.ts";

const tag = (name: string, revision: string) => ({ "istio.io/tag": name, "istio.io/rev": revision });
const rev = (revision: string) => ({ "istio.io/rev": revision });

function state(
  revision: string,
  more: { webhooks?: Record<string, Record<string, string>>; defaultRevision?: string },
) {
  return {
    revision,
    webhooks: new Map(Object.entries(more.webhooks ?? {})),
    services: new Map([["istiod-svc-tag", tag("svc-tag", "canary")]]),
    defaultRevision: more.defaultRevision ?? "",
  };
}

test("a label naming the revision or one of its tags (webhook or Service) is the revision's", () => {
  const canary = state("canary", {
    webhooks: { "istio-revision-tag-prod": tag("prod", "canary"), x: tag("x", "stable") },
  });
  assert.equal(isMineIn(canary, rev("canary"), undefined), true);
  assert.equal(isMineIn(canary, rev("prod"), undefined), true);
  assert.equal(isMineIn(canary, rev("svc-tag"), undefined), true);
  assert.equal(isMineIn(canary, rev("x"), undefined), false);
  assert.equal(isMineIn(canary, rev("stable"), undefined), false);
  // A webhook labelled with a revision but no tag is no tag.
  const untagged = state("canary", { webhooks: { y: rev("canary") } });
  assert.equal(isMineIn(untagged, rev(""), {}), false);
});

test("an unlabelled object takes its namespace's label; of no known namespace it is everyone's", () => {
  const canary = state("canary", {});
  assert.equal(isMineIn(canary, {}, rev("canary")), true);
  assert.equal(isMineIn(canary, {}, rev("stable")), false);
  assert.equal(isMineIn(canary, rev("stable"), rev("canary")), false);
  assert.equal(isMineIn(canary, undefined, undefined), true);
  assert.equal(isMineIn(canary, {}, {}), false);
});

test("unlabelled objects: the default tag's revision, else the default revision when no default tag names another", () => {
  // Revision "default" has the tag "default" of itself.
  assert.equal(isMineIn(state("default", {}), {}, {}), true);
  const defaultTag = { [DEFAULT_TAG_WEBHOOK]: tag("default", "canary") };
  assert.equal(isMineIn(state("canary", { webhooks: defaultTag }), {}, {}), true);
  assert.equal(isMineIn(state("canary", { webhooks: defaultTag }), rev("default"), {}), true);
  assert.equal(isMineIn(state("stable", { webhooks: defaultTag }), {}, {}), false);
  // The default revision (istiod-default-validator's label) without a default tag.
  assert.equal(isMineIn(state("stable", { defaultRevision: "stable" }), {}, {}), true);
  assert.equal(isMineIn(state("stable", { defaultRevision: "canary" }), {}, {}), false);
  // A default tag naming another revision wins over the default revision.
  assert.equal(isMineIn(state("stable", { webhooks: defaultTag, defaultRevision: "stable" }), {}, {}), false);
  // ...but a default revision "default" always has its own tag "default".
  assert.equal(isMineIn(state("default", { webhooks: defaultTag }), {}, {}), true);
});
