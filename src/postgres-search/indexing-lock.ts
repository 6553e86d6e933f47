import { sql, type Kysely } from 'kysely'

/**
 * The lease that the one instance indexing a shared index holds: a row of this table, in the schema
 * of the index (`current_schema()`), so that registries in other schemas of the same database each
 * have an indexer of their own.
 */
const LEASE_TABLE = 'search_indexing_lease'
/** The advisory lock (class "ERIX" in ASCII) under which the lease's table is made, by one instance at a time. */
const INDEXING_LOCK_CLASS = 0x45524958
/** How often an instance without the lease tries to take it, and the one with it renews it. */
const CHECK_EVERY_MS = 2000
/**
 * How many checks a lease outlives its last renewal by, unless `leaseMs` says otherwise: a holder that
 * died is taken over within (LEASE_CHECKS + 1) checks, 8 s by default; one whose renewals fail for
 * that long stops indexing.
 */
const LEASE_CHECKS = 3

export interface IndexingLockOptions {
  /** The store's database (its `db`): the lease is a row there, taken and renewed in one statement each. */
  db: Kysely<any>
  /** This instance took the lease: it indexes from now on. */
  onAcquired: () => void
  /** This instance lost the lease (it could not renew it in time): it must stop indexing. */
  onLost: () => void
  /** How often an instance without the lease tries to take it, and the holder renews it (default 2 s). */
  checkEveryMs?: number
  /**
   * How long a lease lasts past its last renewal (default three checks). It bounds how long a dead
   * holder keeps the index without an indexer, and how long a holder may go without renewing (its
   * process stalled, its pool busy, the database slow) before it counts the lease as lost.
   */
  leaseMs?: number
}

export interface IndexingLock {
  /** Whether this instance holds the lease. */
  held(): boolean
  /** Lets the lease go (the next instance takes it at its next try), and stops trying to take it. */
  close(): Promise<void>
}

/**
 * One writer, every reader: of the instances over one database, the one that holds the lease row
 * indexes. Not a session advisory lock: through a transaction pooler (PgBouncer, RDS Proxy,
 * Supavisor) a session is not the instance's, and its lock would go to whichever client comes next.
 * Each take and renewal is one statement (its own transaction) on the store's pool, timed by the
 * server's clock. A holder counts the lease as lost once its last renewal (from when it was sent)
 * is a lease's life old, before the server lets another take it; when it dies, the lease expires
 * and another instance takes it at its next try.
 */
export async function followIndexingLock({ db, onAcquired, onLost, checkEveryMs = CHECK_EVERY_MS, leaseMs = checkEveryMs * LEASE_CHECKS }: IndexingLockOptions): Promise<IndexingLock> {
  if (!(leaseMs > checkEveryMs)) throw new RangeError(`leaseMs (${leaseMs}) must be longer than checkEveryMs (${checkEveryMs}): a lease would run out between its renewals`)
  const holder = crypto.randomUUID()
  const lease = sql.table(LEASE_TABLE)
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${INDEXING_LOCK_CLASS}, hashtext(current_schema()))`.execute(trx)
    await sql`create table if not exists ${lease} (name text primary key, holder text not null, expires_at timestamptz not null)`.execute(trx)
  })
  let held = false
  let closed = false
  let timer: ReturnType<typeof setTimeout> | undefined
  /** When the lease's life runs out unless renewed before (`performance.now()`): from when the last renewal was sent. */
  let deadline = 0
  let expiry: ReturnType<typeof setTimeout> | undefined

  const lose = () => {
    clearTimeout(expiry)
    if (!held) return
    held = false
    onLost()
  }
  // After a stall of the process, the expiry's timer runs before the answers that came meanwhile are
  // read: a renewal answered in time is read first (setImmediate runs after I/O), then the deadline.
  const expire = () =>
    setImmediate(() => {
      if (closed) return
      const left = deadline - performance.now()
      if (left <= 0) return lose()
      // Renewed meanwhile, or the timer fired early (it counts from the loop's cached time).
      clearTimeout(expiry)
      expiry = setTimeout(expire, left)
    })

  const attempt = async () => {
    const sent = performance.now()
    try {
      const { rows } = await sql<{ holder: string }>`
        insert into ${lease} as lease (name, holder, expires_at) values ('search', ${holder}, clock_timestamp() + ${leaseMs}::float8 * interval '1 millisecond')
        on conflict (name) do update set holder = excluded.holder, expires_at = excluded.expires_at
        where lease.holder = excluded.holder or lease.expires_at < clock_timestamp()
        returning holder`.execute(db)
      if (closed) return
      if (rows.length === 0) return lose()
      clearTimeout(expiry)
      deadline = sent + leaseMs
      expiry = setTimeout(expire, deadline - performance.now())
      if (!held) {
        held = true
        onAcquired()
      }
    } catch {
      // The database away: the lease stays this instance's until its life is out (`expiry`).
    }
  }
  // Every check from when the last attempt was sent, not from its answer: a slow answer or a stall
  // does not put the next renewal off towards the lease's end.
  const follow = async () => {
    const sent = performance.now()
    await attempt()
    if (!closed) timer = setTimeout(() => void follow(), sent + checkEveryMs - performance.now())
  }
  await follow()

  return {
    held: () => held,
    async close() {
      closed = true
      clearTimeout(timer)
      clearTimeout(expiry)
      const wasHeld = held
      held = false
      if (wasHeld) await sql`delete from ${lease} where name = 'search' and holder = ${holder}`.execute(db).catch(() => undefined)
    },
  }
}
