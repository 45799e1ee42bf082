// Finds module-level caches in TypeScript sources (issue 27: what a build memoises lives in the cache
// object its caller owns, the XdsCache, never in a module). Read as text, comments stripped; biome's
// formatting puts every top-level statement at column 0 and every class member one level in, which the
// patterns below rely on. A module-level cache is any of:
//   a. a top-level `new Map/WeakMap/Set/WeakSet` that is mutated (`.set`, `.add`, `.delete`, `.clear`,
//      or the binding reassigned) in its file or in a file importing it by name: a table filled after
//      the module loads. A table built once from literals and never written is a constant, not a cache;
//   b. a class's static `new Map/WeakMap/Set/WeakSet` field, mutated;
//   c. a top-level `new` of a memo or cache class (`NameMemo`, `MemoStore`, `XdsCache`, `…Memo`, `…Cache`);
//   d. a top-level call of a memo or cache factory (`resourceCache(…)`, `proxyClassMemo(…)`: a function
//      named `…Memo` or `…Cache`), whose closure holds the table.
// Memo descriptors (`weakTable`, `mapTable`, `objectTable`, `resourceTable`, `new KeyFormat`) hold nothing
// and are not caches. Aliases and tables passed away to be filled elsewhere are not followed.
import { stripComments } from "./layers.ts";

export interface ModuleCache {
  file: string;
  name: string;
  /** 1-based line of the declaration. */
  line: number;
  /** Which rule found it. */
  why: string;
}

const COLLECTION = "(?:Map|WeakMap|Set|WeakSet)";
const MEMO_CLASS = "(?:\\w*(?:Memo|Cache)|MemoStore)";
const MEMO_FACTORY = "\\w*(?:Memo|Cache)";

/** `(export )(const|let|var) NAME …= ` at column 0, up to the initializer (the statement's own text). */
const TOP_LEVEL = "^(?:export\\s+)?(?:const|let|var)\\s+(\\w+)\\b[^;]*?=\\s*";
const TOP_COLLECTION = new RegExp(`${TOP_LEVEL}new\\s+${COLLECTION}\\b`, "gm");
const TOP_MEMO_OBJECT = new RegExp(`${TOP_LEVEL}new\\s+(${MEMO_CLASS})\\b`, "gm");
const TOP_MEMO_FACTORY = new RegExp(`${TOP_LEVEL}(${MEMO_FACTORY})\\s*(?:<[^;]*?>)?\\(`, "gm");
const STATIC_COLLECTION = new RegExp(
  `^[ \\t]+(?:(?:private|protected|public|readonly|static)\\s+)*static\\s+(?:readonly\\s+)?#?(\\w+)\\b[^;]*?=\\s*new\\s+${COLLECTION}\\b`,
  "gm",
);

function escapeName(name: string): string {
  return name.replace(/\$/g, "\\$");
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** Whether `text` writes the binding `name` (a method call that changes it, or an assignment). */
function mutates(text: string, name: string, declarationEnd: number): boolean {
  const n = escapeName(name);
  if (new RegExp(`(?<![\\w$])${n}\\s*\\.\\s*(?:set|add|delete|clear)\\s*\\(`).test(text)) return true;
  // Reassigned after its declaration (`name = new WeakMap()`), not compared.
  const assigned = new RegExp(`(?<![\\w$.])${n}\\s*=(?![=>])`, "g");
  for (const m of text.matchAll(assigned)) if ((m.index ?? 0) >= declarationEnd) return true;
  return false;
}

/** Whether `text` imports `name` by name (`import { name }`, `import { x as name }`). */
function importsName(text: string, name: string): boolean {
  return new RegExp(`\\bimport\\s[^;]*\\{[^}]*(?<![\\w$])${escapeName(name)}(?![\\w$])[^}]*\\}[^;]*\\bfrom\\b`).test(
    text,
  );
}

/**
 * The module-level caches of `file`; `others` are every file's text with comments stripped (as
 * stripComments gives it), read for writes of exported tables.
 */
export function findModuleCaches(
  file: string,
  source: string,
  others: ReadonlyMap<string, string> = new Map(),
): ModuleCache[] {
  const text = stripComments(source);
  const found: ModuleCache[] = [];
  const add = (name: string, index: number, why: string) => found.push({ file, name, line: lineOf(text, index), why });
  for (const m of text.matchAll(TOP_COLLECTION)) {
    const [statement, name] = m;
    const index = m.index ?? 0;
    const end = index + statement.length;
    const exported = statement.startsWith("export");
    const writtenElsewhere =
      exported &&
      [...others].some(
        ([other, stripped]) => other !== file && importsName(stripped, name) && mutates(stripped, name, 0),
      );
    if (mutates(text, name, end) || writtenElsewhere) add(name, index, "a module-level collection that is written");
  }
  for (const m of text.matchAll(STATIC_COLLECTION)) {
    const [statement, name] = m;
    const index = m.index ?? 0;
    if (mutates(text, name, index + statement.length)) add(name, index, "a static collection that is written");
  }
  for (const m of text.matchAll(TOP_MEMO_OBJECT)) add(m[1], m.index ?? 0, `a module-level ${m[2]}`);
  for (const m of text.matchAll(TOP_MEMO_FACTORY)) add(m[1], m.index ?? 0, `a module-level memo from ${m[2]}()`);
  return found.sort((a, b) => a.line - b.line);
}

/** The module-level caches of every file. */
export function findAllModuleCaches(files: ReadonlyMap<string, string>): ModuleCache[] {
  const stripped = new Map([...files].map(([file, source]) => [file, stripComments(source)]));
  return [...files].flatMap(([file, source]) => findModuleCaches(file, source, stripped));
}
