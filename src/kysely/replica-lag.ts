import { sql } from 'kysely'
import type { ReplicaLag } from '../telemetry/readiness.js'
import type { KyselyStore } from './kysely-store.js'

/**
 * How far the store's replica (`readDb`) is behind its primary (`db`): the WAL bytes it has not
 * replayed, against the primary's current position (against what it has received when the primary
 * does not answer), and the seconds since the data it serves was current. A replica with nothing
 * left to replay is 0 behind, and so is one that is no standby (the primary itself).
 *
 * The seconds are the lesser of two bounds, each an age the replica's data is at most:
 * - since the last transaction it replayed was committed. Alone, this grows while the primary is
 *   idle: nothing to replay is no lag, and a WAL record without a transaction (a checkpoint's) then
 *   makes a replica that has not replayed it yet look as old as the last write;
 * - since a read here found it had replayed all the primary had written (none before the first).
 * Concurrent calls share one read.
 */
export function replicaLagOf(store: KyselyStore): () => Promise<ReplicaLag> {
  let caughtUpAt: number | undefined
  let reading: Promise<ReplicaLag> | undefined

  async function read(): Promise<ReplicaLag> {
    const askedAt = Date.now()
    const primary = await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(store.db).then(
      ({ rows }) => rows[0]!.lsn,
      () => null,
    )
    const { rows } = await sql<{ standby: boolean; behind: string | null; replayedAgo: number | string | null }>`
      select pg_is_in_recovery() as standby,
        pg_wal_lsn_diff(coalesce(${primary}::pg_lsn, pg_last_wal_receive_lsn()), pg_last_wal_replay_lsn()) as behind,
        extract(epoch from now() - pg_last_xact_replay_timestamp()) as "replayedAgo"`.execute(store.readDb)
    const { standby, behind, replayedAgo } = rows[0]!
    if (!standby) return { seconds: 0, bytes: 0 }
    const bytes = Math.max(0, Number(behind ?? 0))
    if (bytes === 0) {
      // With the primary away, nothing newer is written: a replica that has replayed all it
      // received serves the newest there is (and the read API stays up over its replicas).
      if (primary !== null) caughtUpAt = askedAt
      return { seconds: 0, bytes }
    }
    const seconds = Math.min(replayedAgo === null ? Infinity : Number(replayedAgo), caughtUpAt === undefined ? Infinity : (Date.now() - caughtUpAt) / 1000)
    return { seconds: Number.isFinite(seconds) ? Math.max(0, Math.round(seconds * 10) / 10) : null, bytes }
  }

  return () =>
    (reading ??= read().finally(() => {
      reading = undefined
    }))
}
