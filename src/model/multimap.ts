// Maps of lists, the shape of most push indexes.

/** Appends `value` to the list under `key`, creating it. */
export function appendTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
