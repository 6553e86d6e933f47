import type { EntityResource } from './types.js'

/** Where a mirror is: saved after every page it has applied, so a restart resumes there. */
export type MirrorCheckpoint =
  | { filter: string; phase: 'backfill'; after: string | null; head: string | null }
  | { filter: string; phase: 'follow'; cursor: string | null }

export interface MirrorOptions {
  /** The subset to keep: GFFS qualifiers, e.g. `type:person jurisdiction:US-WA`. Default: everything. */
  filter?: string
  /** An entity entered the subset or changed in it: store it (idempotent: it may be called again). */
  onUpsert(entity: EntityResource): void | Promise<void>
  /** The entity left the subset (deleted, drained, merged away, or changed out of the filter). */
  onRemove(id: string): void | Promise<void>
  /** Resume from a saved position; without it the mirror starts with a back-fill. */
  checkpoint?: {
    load(): MirrorCheckpoint | null | Promise<MirrorCheckpoint | null>
    save(checkpoint: MirrorCheckpoint): void | Promise<void>
  }
  /** Stop once caught up with the feed, instead of polling for more. */
  once?: boolean
  /** Between polls of the feed once caught up (default 2 s); not used when `live`. */
  pollIntervalMs?: number
  /**
   * Once caught up, follow the feed's event stream (`watchChanges`): each change is applied as soon
   * as it commits, on any instance, with no request every `pollIntervalMs`; the checkpoint is saved
   * at each position the stream reaches.
   */
  live?: boolean
  /** Stops the mirror; the promise then rejects with the signal's reason. */
  signal?: AbortSignal
}

export interface MirrorResult {
  /** The feed position the copy is current with. */
  checkpoint: MirrorCheckpoint
}
