/** `entity-registry/client`: a typed client over `fetch` (Node, Bun, Deno, browsers). */
export { createClient, type ClientOptions } from './client.js'
export type { RegistryClient, ListOptions, ChangesOptions, DownloadOptions, Download } from './registry-client.js'
export { mirror } from './mirror.js'
export type { WatchChangesOptions } from './watch-changes.js'
export type { MirrorOptions, MirrorCheckpoint, MirrorResult } from './mirror-options.js'
export { RegistryError, type ApiErrorObject } from './errors.js'
export type { RetryOptions } from './retry.js'
export type { EntityResource, EntityChange, FacetCounts, Page } from './types.js'
