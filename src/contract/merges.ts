import type { StoredEntity } from './entity.js'

/** Merge chains longer than this are not followed (spec 8). */
export const MAX_MERGE_HOPS = 5

export interface MergeChain {
  /**
   * Where the chain ends: the first entity that is not merged. Null when a link is missing or the
   * chain is longer than MAX_MERGE_HOPS (a cycle is such a chain).
   */
  end: StoredEntity | null
  /** The ids passed through, the starting one first. */
  path: string[]
}

/** Follows `mergedInto` from an entity: the one rule that reads and the warehouse's merges share. */
export async function followMerges(start: StoredEntity | null, getEntity: (id: string) => Promise<StoredEntity | null>): Promise<MergeChain> {
  const path: string[] = []
  let entity = start
  for (let hops = 0; entity?.state === 'merged'; hops++) {
    path.push(entity.id)
    entity = hops === MAX_MERGE_HOPS || entity.mergedInto === null ? null : await getEntity(entity.mergedInto)
  }
  if (entity !== null) path.push(entity.id)
  return { end: entity, path }
}
