/**
 * The PostgreSQL advisory lock that the one instance indexing a shared index holds: this class
 * ("ERIX" in ASCII) and the hash of the index's schema, so that registries in other schemas of the
 * same database each have an indexer of their own.
 */
const INDEXING_LOCK_CLASS = 0x45524958
/** How often an instance without the lock tries to take it, and one with it checks its connection. */
const CHECK_EVERY_MS = 2000

export interface IndexingLockOptions {
  /** The database of the shared index: the lock is held on a connection of its own to it. */
  connectionString: string
  /** This instance took the lock: it indexes from now on. */
  onAcquired: () => void
  /** This instance lost the lock (its connection broke): it must stop indexing. */
  onLost: () => void
  checkEveryMs?: number
}

export interface IndexingLock {
  /** Whether this instance holds the lock. */
  held(): boolean
  /** Lets the lock go (ending its connection), and stops trying to take it. */
  close(): Promise<void>
}

/**
 * One writer, every reader: of the instances over one database, the one that holds a session-level
 * advisory lock indexes. The lock lives as long as its connection, so when that instance dies the
 * server lets it go, and another takes it at its next try, within `checkEveryMs`.
 */
export async function followIndexingLock({ connectionString, onAcquired, onLost, checkEveryMs = CHECK_EVERY_MS }: IndexingLockOptions): Promise<IndexingLock> {
  const { default: pg } = await import('pg')
  let client: InstanceType<typeof pg.Client> | null = null
  let held = false
  let closed = false
  let timer: ReturnType<typeof setTimeout> | undefined

  const drop = () => {
    if (held) {
      held = false
      onLost()
    }
    void client?.end().catch(() => undefined)
    client = null
  }

  const attempt = async () => {
    try {
      if (client === null) {
        const connecting = new pg.Client({ connectionString, connectionTimeoutMillis: checkEveryMs })
        connecting.on('error', drop)
        client = connecting
        await connecting.connect()
      }
      if (held) {
        // A connection lost without an error event would leave two instances indexing.
        await client.query('select 1')
      } else {
        const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock($1, hashtext(current_schema())) as locked', [INDEXING_LOCK_CLASS])
        if (rows[0]?.locked === true && !closed) {
          held = true
          onAcquired()
        }
      }
    } catch {
      drop()
    }
    if (!closed) timer = setTimeout(() => void attempt(), checkEveryMs)
  }
  await attempt()

  return {
    held: () => held,
    async close() {
      closed = true
      clearTimeout(timer)
      held = false
      await client?.end().catch(() => undefined)
      client = null
    },
  }
}
