/** How a store's connection pool is used (`KyselyStore.connectionPool`), read at each scrape of `/metrics`. */
export interface ConnectionPoolUse {
  /** The most connections the pool holds to the database (`poolSize`, `--pool-size`). */
  size: number
  /** Connections lent out now, and connections open and unused. */
  busy: number
  idle: number
  /** Statements waiting for a connection now. */
  waiting: number
  /** Since the start: statements that found every connection busy and waited for one. */
  waits: number
  /** Since the start: waits that ran past the bounded wait and were answered as the store unavailable (503). */
  timeouts: number
}
