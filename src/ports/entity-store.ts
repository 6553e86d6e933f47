import type { StoredChange, StoredEntity } from '../contract/entity.js'
import type { FacetField } from '../contract/fields.js'
import type { ResourceTemplate } from '../contract/resource-template.js'
import type { Qualifier } from '../gffs/types.js'
import type { ChangeNotifier } from './change-notifier.js'

export interface ListEntitiesQuery {
  /** ANDed together (`matchesQualifiers` evaluates them); none lists every canonical entity. */
  qualifiers: readonly Qualifier[]
  /** Exclusive keyset cursor: the last id of the previous page. */
  after: string | null
  limit: number
  /**
   * The caller takes the page as one text (`EntityPage.joinedResources`) where the store can give it:
   * the HTTP handler does. A store that keeps resources rendered may then join them in the
   * database, one value to read instead of a row each; any store may ignore it.
   */
  joined?: boolean
}

/**
 * A canonical entity as a store may list it: its resource as `renderEntityResource` rendered it when
 * the entity was written, served as it is (no snapshot read, parsed or serialised per request).
 */
export interface RenderedEntity {
  id: string
  resource: ResourceTemplate
}

/** What a list page holds: entities (rendered when served), or the resources a store kept rendered. */
export type ListedEntity = StoredEntity | RenderedEntity

export interface EntityPage {
  /** Canonical entities in id order; empty when `joinedResources` holds them. */
  entities: ListedEntity[]
  /**
   * Only where the query asked for `joined`: the page's resources as `renderEntityResource` renders
   * them, in id order and comma-separated ('' for none), as text or as its UTF-8 bytes (served
   * without being decoded). `cursor` is then given.
   */
  joinedResources?: ResourceTemplate | Uint8Array
  /** Whether another matching entity may follow this page. */
  hasMore: boolean
  /**
   * Where the next page starts (its `after`): the last entity's id, or an id past it when the store
   * checked further rows without finding another match within its bound on one request's cost.
   * Omitted: the last entity's id.
   */
  cursor?: string | null
  /** The feed head as of the page, read with it: given on every page of a store whose `pagesCarryFeedHead` is true. */
  feedHead?: string | null
}

export interface ListChangesQuery {
  /** Applied to each change's post-change snapshot; none matches every change. */
  qualifiers: readonly Qualifier[]
  /** Exclusive cursor: a change id from a previous page, or null for the start of the feed. */
  after: string | null
  limit: number
  /** At most this many records of the feed are scanned after `after`, matching or not. */
  window: number
  /**
   * `after` (the default): the qualifiers match the post-change snapshot. `either`: they match the
   * snapshot before or after the change, so that changes taking an entity out of a subset are seen.
   */
  scope?: 'after' | 'either'
}

export interface ChangePage {
  /** Matching changes in feed order. */
  changes: StoredChange[]
  /** The id of the last record scanned; `after` when nothing new was scanned. */
  cursor: string | null
  /** Whether the scan stopped before the head of the feed. */
  hasMore: boolean
}

export interface FacetQuery {
  /** ANDed together, as a list page's; none counts every canonical entity. */
  qualifiers: readonly Qualifier[]
  fields: readonly FacetField[]
  /** Values kept a field at most: the most frequent. */
  limit: number
}

export interface FacetValue {
  value: string
  count: number
}

export interface FacetCounts {
  /** Canonical entities the qualifiers match: as many as their list pages hold. */
  total: number
  /**
   * For each field asked, the values of those entities by count (descending), then value (code
   * point order); an entity without the field counts in `total` only.
   */
  facets: Partial<Record<FacetField, FacetValue[]>>
  /** The feed head the counts are as of, read in the same snapshot. */
  feedHead: string | null
}

/** The most ids `EntityStore.getEntities` is asked for at once. */
export const GET_ENTITIES_LIMIT = 1000

/** The read side of a store. Implementations must not expose anything outside the public snapshot. */
export interface EntityStore {
  listEntities(query: ListEntitiesQuery): Promise<EntityPage>
  /**
   * True: every page carries `feedHead`, read in the same snapshot as the page (one round trip a
   * page). Otherwise `feedHead()` is asked before each page.
   */
  readonly pagesCarryFeedHead?: boolean
  /** The entity with this id in any state, or null when it never existed. */
  getEntity(id: string): Promise<StoredEntity | null>
  /**
   * Optional: in one read, the entity `id` stands for: the entity itself unless merged, else the
   * `end` `followMerges` finds from it (null where that is null, or `id` never existed). Without it,
   * a get follows merges one `getEntity` a hop.
   */
  getMergeEnd?(id: string): Promise<StoredEntity | null>
  /**
   * The entities with these ids (at most `GET_ENTITIES_LIMIT`), in any state and any order, in one read; ids that
   * never existed are left out. Optional: without it, search reads a page of results one `getEntity`
   * at a time.
   */
  getEntities?(ids: readonly string[]): Promise<StoredEntity[]>
  listChanges(query: ListChangesQuery): Promise<ChangePage>
  /**
   * Counts of the canonical entities matching a filter, by value of each field asked, in one
   * snapshot. May throw `FacetFilterTooBroadError` rather than read more entities than it allows.
   */
  countFacets(query: FacetQuery): Promise<FacetCounts>
  /** The id of the newest change visible to readers, or null for an empty feed. */
  feedHead(): Promise<string | null>
  /** Whether a change id could have come from this store (its cursor format). */
  isChangeId(id: string): boolean
  /**
   * Optional: what tells of commits to the feed, in this process and others (long-polls and event
   * streams wait on it). Without one, the registry reads `feedHead()` every 250 ms while any waits.
   */
  readonly changeNotifier?: ChangeNotifier
}
