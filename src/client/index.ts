/** `entity-registry/client`: a typed client over `fetch` (Node, Bun, Deno, browsers). */
export { createClient, type ClientOptions, type RegistryClient, type ListOptions, type ChangesOptions, type DownloadOptions, type Download } from './client.js'
export { mirror, type MirrorOptions, type MirrorCheckpoint, type MirrorResult } from './mirror.js'
export { RegistryError, type ApiErrorObject } from './errors.js'
export type { RetryOptions } from './retry.js'
export type { EntityResource, EntityChange, FacetCounts, Page } from './types.js'
