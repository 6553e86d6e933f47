import type { EmbeddedRegistryOptions } from '../node/embedded-registry.js'
import type { DataOptions } from '../node/data-dir.js'
import type { LogFormat, LogLevel } from '../telemetry/log-levels.js'
import type { DeleteLimit } from '../warehouse/import.js'
import type { ProgressFormat } from './progress.js'

/** What the command line asks for. */
export type Invocation =
  | { command: 'help'; text: string }
  | { command: 'version' }
  | { command: 'serve'; options: ServeOptions }
  | { command: 'import'; input: ImportCommandOptions; data: DataOptions }
  | { command: 'reindex'; data: ReindexCommandOptions }
  | KeysInvocation

/** What `serve` listens on and how it logs. */
export interface ServeOptions extends EmbeddedRegistryOptions {
  port: number
  host: string
  trustProxy: boolean
  /** The admin listener's port (`/live`, `/ready`, `/metrics`); none when absent. */
  adminPort?: number
  adminHost: string
  logLevel: LogLevel
  logFormat: LogFormat
  /** A response whose client has read nothing for this long is closed. */
  sendTimeoutMs: number
  /** How long requests in flight may take to finish after SIGTERM or SIGINT. */
  shutdownTimeoutMs: number
}

/** What `import` reads and how. */
export interface ImportCommandOptions {
  /** An NDJSON file (gzip-compressed or not), or `-` for standard input. */
  source: string
  /** Lines per transaction. */
  batchSize?: number
  /** The input is the whole warehouse (`importNdjson`'s `full`). */
  full?: { maxDelete?: DeleteLimit }
  progress?: ProgressFormat
}

/** What `reindex` rebuilds and how it shows progress. */
export type ReindexCommandOptions = DataOptions & { search?: string; embedder?: string; indexTexts?: boolean; progress?: ProgressFormat }

/** `keys create|list|revoke` and `orgs list`, with what each was given. */
export type KeysInvocation =
  | { command: 'keys create'; data: DataOptions; org: string; label?: string; expiresAt?: Date }
  | { command: 'keys list'; data: DataOptions; org?: string; json: boolean }
  | { command: 'keys revoke'; data: DataOptions; which: { id: string } | { org: string } }
  | { command: 'orgs list'; data: DataOptions; json: boolean }
