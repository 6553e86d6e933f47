import type { AttributeField } from './fields.js'
import type { ResourceTemplate } from './resource-template.js'

/** A rendition as stored: everything public but `links`, which depends on the base URL. */
export interface StoredRendition {
  renditionId: string
  conversion: string
  language?: string
  mime: string
  filename: string
  fetchedUrl?: string
  /**
   * The bytes' SHA-256 (hex), recorded on import: their blob is kept under `sha256-<hex>`, once
   * whatever number of renditions hold the same bytes. Never served.
   */
  sha256?: string
}

export interface StoredText {
  textId: string
  localUrl?: string
  date?: string
  mime?: string
  type?: string
  renditions: StoredRendition[]
}

/** The public part of a snapshot: contract fields and texts, nothing else. */
export type PublicSnapshot = { type?: string } & { [F in AttributeField]?: string } & {
  texts: StoredText[]
}

/**
 * canonical: listed and served; deleted: a tombstone (empty snapshot);
 * merged: follows `mergedInto`; drained: withdrawn from publication (404).
 */
export type EntityState = 'canonical' | 'deleted' | 'merged' | 'drained'

export interface StoredEntity {
  id: string
  state: EntityState
  mergedInto: string | null
  snapshot: PublicSnapshot
  /**
   * A canonical entity's resource as `renderEntityResource` rendered it when it was written, where
   * the store keeps it (the SQL stores do): served as it is instead of rendered per request.
   */
  resource?: ResourceTemplate
}

export type ChangeType = 'create' | 'update' | 'delete' | 'merge'

export interface StoredChange {
  /** Opaque, sorts in feed order: `echg_...`. */
  changeId: string
  entityId: string
  changeType: ChangeType
  changedKeys: string[]
  mergedInto: string | null
  recordedAt: string
  /** The post-change public snapshot (for a merge: the source's last snapshot). */
  snapshot: PublicSnapshot
}

export function isEmptySnapshot(snapshot: PublicSnapshot): boolean {
  return Object.keys(snapshot).every((key) => key === 'texts') && snapshot.texts.length === 0
}

export const EMPTY_SNAPSHOT: PublicSnapshot = Object.freeze({ texts: [] }) as PublicSnapshot
