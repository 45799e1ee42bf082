// RFC 6902 JSON Patch: the difference between two JSON documents as add/remove/replace operations
// (what a mutating webhook answers), and applying such a patch (what the API server and kube-inject do).
import { isDeepStrictEqual } from "node:util";
import { asObject, type JsonObject } from "../../config/validation/common/index.ts";

export interface PatchOperation {
  op: "add" | "remove" | "replace";
  path: string;
  value?: unknown;
}

/** RFC 6901: "~" and "/" in a key are escaped. */
function pointerToken(key: string | number): string {
  return String(key).replaceAll("~", "~0").replaceAll("/", "~1");
}

function unescapeToken(token: string): string {
  return token.replaceAll("~1", "/").replaceAll("~0", "~");
}

/** Operations turning `from` into `to`. Lists are compared index by index, then grown or shrunk at the end. */
export function createPatch(from: unknown, to: unknown, path = ""): PatchOperation[] {
  if (isDeepStrictEqual(from, to)) return [];
  const fromObject = asObject(from);
  const toObject = asObject(to);
  if (fromObject && toObject) {
    const ops: PatchOperation[] = [];
    for (const key of Object.keys(fromObject)) {
      if (!(key in toObject)) ops.push({ op: "remove", path: `${path}/${pointerToken(key)}` });
    }
    for (const [key, value] of Object.entries(toObject)) {
      const child = `${path}/${pointerToken(key)}`;
      if (key in fromObject) ops.push(...createPatch(fromObject[key], value, child));
      else ops.push({ op: "add", path: child, value });
    }
    return ops;
  }
  if (Array.isArray(from) && Array.isArray(to)) {
    const ops: PatchOperation[] = [];
    const common = Math.min(from.length, to.length);
    for (let i = 0; i < common; i++) ops.push(...createPatch(from[i], to[i], `${path}/${i}`));
    for (let i = common; i < to.length; i++) ops.push({ op: "add", path: `${path}/${i}`, value: to[i] });
    // Remove from the end so earlier indexes stay valid.
    for (let i = from.length - 1; i >= common; i--) ops.push({ op: "remove", path: `${path}/${i}` });
    return ops;
  }
  return [{ op: "replace", path, value: to }];
}

/** The document with `ops` applied (the input is not modified); throws on a path that does not exist. */
export function applyPatch<T>(document: T, ops: readonly PatchOperation[]): T {
  const root: { value: unknown } = { value: structuredClone(document) };
  for (const op of ops) {
    const tokens = op.path === "" ? [] : op.path.slice(1).split("/").map(unescapeToken);
    let parent: unknown = root;
    let key: string = "value";
    for (const token of tokens) {
      parent = (parent as JsonObject)[key];
      key = token;
      if (typeof parent !== "object" || parent === null) throw new Error(`JSON patch: no such path ${op.path}`);
    }
    if (Array.isArray(parent)) {
      const index = key === "-" ? parent.length : Number(key);
      if (op.op === "add") parent.splice(index, 0, structuredClone(op.value));
      else if (op.op === "remove") parent.splice(index, 1);
      else parent[index] = structuredClone(op.value);
    } else {
      const target = parent as JsonObject;
      if (op.op !== "add" && !(key in target)) throw new Error(`JSON patch: no such path ${op.path}`);
      if (op.op === "remove") delete target[key];
      else target[key] = structuredClone(op.value);
    }
  }
  return root.value as T;
}
