import assert from "node:assert/strict";
import { test } from "node:test";
import type { Event } from "./collection.ts";
import { join } from "./join.ts";
import { StaticCollection } from "./static.ts";

interface Host {
  name: string;
  from: string;
  ports: number[];
}

const byName = { keyOf: (h: Host) => h.name };

function host(name: string, from: string, ports: number[] = [80]): Host {
  return { name, from, ports };
}

test("a join holds each key once; the first input holding it wins", () => {
  const kube = new StaticCollection([host("a", "kube"), host("b", "kube")], byName);
  const entries = new StaticCollection([host("b", "entry"), host("c", "entry")], byName);
  const all = join([kube, entries]);
  assert.deepEqual(
    all.list().map((h) => `${h.name}:${h.from}`),
    ["a:kube", "b:kube", "c:entry"],
  );
  assert.deepEqual(all.debug().dependencies, [kube.name, entries.name]);
});

test("removing the winning object reveals the next input's object; changes to a hidden one emit nothing", () => {
  const kube = new StaticCollection([host("b", "kube")], byName);
  const entries = new StaticCollection([host("b", "entry")], byName);
  const all = join([kube, entries]);
  const seen: Event<Host>[] = [];
  all.registerBatch((events) => seen.push(...events), false);
  entries.upsert(host("b", "entry", [8080]));
  assert.deepEqual(seen, []);
  kube.delete("b");
  assert.deepEqual(seen, [{ type: "update", old: host("b", "kube"), new: host("b", "entry", [8080]) }]);
  entries.delete("b");
  assert.deepEqual(seen.at(-1), { type: "delete", old: host("b", "entry", [8080]) });
  assert.equal(all.size, 0);
});

test("merge combines the objects every input holds under a key, in input order", () => {
  const first = new StaticCollection([host("a", "one", [80]), host("b", "one", [81])], byName);
  const second = new StaticCollection([host("a", "two", [443])], byName);
  const merged = join([first, second], {
    merge: (hosts) => ({
      name: hosts[0].name,
      from: hosts.map((h) => h.from).join("+"),
      ports: hosts.flatMap((h) => h.ports),
    }),
  });
  assert.deepEqual(merged.get("a"), { name: "a", from: "one+two", ports: [80, 443] });
  second.upsert(host("b", "two", [9090]));
  assert.deepEqual(merged.get("b"), { name: "b", from: "one+two", ports: [81, 9090] });
  const recomputes = merged.debug().recomputes;
  second.upsert(host("b", "two", [9090]));
  first.upsert(host("c", "one"));
  assert.equal(merged.debug().recomputes, recomputes + 1);
});

test("a throwing merge keeps the key's last joined object", () => {
  const first = new StaticCollection([host("a", "one", [80])], byName);
  const second = new StaticCollection<Host>([], byName);
  const merged = join([first, second], {
    merge: (hosts) => {
      if (hosts.length > 1) throw new Error("conflict");
      return hosts[0];
    },
  });
  second.upsert(host("a", "two"));
  assert.deepEqual(merged.get("a"), host("a", "one", [80]));
  assert.equal(merged.debug().lastError, "a: conflict");
});

test("an input added later joins behind the others; removed, its objects leave and hidden ones show", () => {
  const local = new StaticCollection([host("a", "local")], byName);
  const all = join([local]);
  const remote = new StaticCollection([host("a", "remote"), host("b", "remote")], byName);
  all.add(remote);
  assert.deepEqual(
    all.list().map((h) => `${h.name}:${h.from}`),
    ["a:local", "b:remote"],
  );
  // Followed while joined.
  remote.upsert(host("c", "remote"));
  assert.equal(all.get("c")?.from, "remote");
  local.delete("a");
  assert.equal(all.get("a")?.from, "remote");
  local.upsert(host("a", "local"));
  all.remove(remote);
  assert.deepEqual(
    all.list().map((h) => `${h.name}:${h.from}`),
    ["a:local"],
  );
  // No longer followed.
  remote.upsert(host("d", "remote"));
  assert.equal(all.get("d"), undefined);
  assert.deepEqual(all.debug().dependencies, [local.name]);
});
