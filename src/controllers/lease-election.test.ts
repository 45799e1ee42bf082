import assert from "node:assert/strict";
import { test } from "node:test";
import { defaultRevisionPreempts } from "./lease-election.ts";

test("the default revision takes a Lease from another revision, wherever that holder elects from", () => {
  const preempts = defaultRevisionPreempts("blue", () => "blue");
  assert.equal(preempts("green"), true);
  assert.equal(preempts("^green"), true);
  assert.equal(preempts("blue"), false);
  // Not the default revision: nothing to take from another revision.
  assert.equal(defaultRevisionPreempts("green", () => "blue")("blue"), false);
  assert.equal(defaultRevisionPreempts("green", () => "")("blue"), false);
});

test("a replica in its own cluster takes its revision's Lease from a holder in another cluster, not the reverse", () => {
  assert.equal(defaultRevisionPreempts("blue", () => "")("^blue"), true);
  // Electing from another cluster itself (a remote cluster's Lease): the holder keeps it.
  assert.equal(defaultRevisionPreempts("blue", () => "", true)("^blue"), false);
  assert.equal(defaultRevisionPreempts("blue", () => "", true)("blue"), false);
  // Remote and the default revision: another revision's holder still yields.
  assert.equal(defaultRevisionPreempts("blue", () => "blue", true)("green"), true);
});
