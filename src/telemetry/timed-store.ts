import type { EntityStore } from '../ports/entity-store.js'
import type { Metrics } from './metrics.js'

/** The store with each read timed into `store_query_duration_seconds`, by operation. */
export function timedStore(store: EntityStore, metrics: Metrics): EntityStore {
  const timed =
    <A extends unknown[], R>(operation: string, read: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const end = metrics.storeQueryDuration.startTimer({ operation })
      try {
        return await read(...args)
      } finally {
        end()
      }
    }
  return {
    ...(store.pagesCarryFeedHead === undefined ? {} : { pagesCarryFeedHead: store.pagesCarryFeedHead }),
    listEntities: timed('list_entities', (query) => store.listEntities(query)),
    getEntity: timed('get_entity', (id) => store.getEntity(id)),
    // A get's read either way: one operation on dashboards whether the store follows merges itself.
    ...(store.getMergeEnd === undefined ? {} : { getMergeEnd: timed('get_entity', (id: string) => store.getMergeEnd!(id)) }),
    listChanges: timed('list_changes', (query) => store.listChanges(query)),
    countFacets: timed('count_facets', (query) => store.countFacets(query)),
    feedHead: timed('feed_head', () => store.feedHead()),
    isChangeId: (id) => store.isChangeId(id),
    ...(store.changeNotifier === undefined ? {} : { changeNotifier: store.changeNotifier }),
  }
}
