import assert from "node:assert/strict";
import { test } from "node:test";
import { NameMemo } from "./name-memo.ts";

test("a name is made once per arguments and kept", () => {
  let made = 0;
  const memo = new NameMemo((a, b, n) => {
    made++;
    return `${a}|${b}|${n}`;
  });
  const first = memo.get("host", "", 80);
  assert.equal(first, "host||80");
  assert.equal(memo.get("host", "", 80), first);
  assert.equal(made, 1);
  assert.equal(memo.get("host", "v1", 80), "host|v1|80");
  assert.equal(memo.get("host", "", 81), "host||81");
  assert.equal(memo.get("other", "", 80), "other||80");
  assert.equal(made, 4);
});

test("a full memo drops what it kept and goes on", () => {
  let made = 0;
  const memo = new NameMemo((a, b, n) => {
    made++;
    return `${a}${b}${n}`;
  }, 2);
  memo.get("a", "", 1);
  memo.get("b", "", 1);
  assert.equal(made, 2);
  assert.equal(memo.get("a", "", 1), "a1", "made again after the drop");
  assert.equal(made, 3);
  assert.equal(memo.get("a", "", 1), "a1");
  assert.equal(made, 3);
});
