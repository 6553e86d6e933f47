/**
 * Sets `key` as the newest entry of `map` (a Map keeps insertion order), then drops the oldest
 * entries past `limit`: the bound of every cache and table of buckets the registry keeps, so that
 * keys chosen by clients cannot grow memory.
 */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, limit: number): void {
  map.delete(key)
  map.set(key, value)
  while (map.size > limit) map.delete(map.keys().next().value!)
}
