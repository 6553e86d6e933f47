/**
 * A streaming replica (a hot standby) of a test's own PostgreSQL server: `pg_basebackup -R` of it
 * into a temporary directory, started on another port, as the `postgres` OS user. Its replay can be
 * paused, to hold it at a past snapshot of the primary.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort } from './free-port.js'
import { withPostgresClient } from './postgres-client.js'
import { POSTGRES_BIN, postgresIds, type PrivatePostgres } from './private-postgres.js'

const run = promisify(execFile)

/** Why a replica cannot be made here, or null; with ER_REQUIRE_POSTGRES=1 its absence fails instead. */
export const streamingReplicaSkipReason =
  (POSTGRES_BIN !== null && existsSync(join(POSTGRES_BIN, 'pg_basebackup'))) || process.env.ER_REQUIRE_POSTGRES === '1'
    ? null
    : 'no pg_basebackup under /usr/lib/postgresql; set ER_REQUIRE_POSTGRES=1 to fail instead'

export interface StreamingReplica {
  /** `postgres://postgres@127.0.0.1:PORT/postgres`: the primary's database, read-only. */
  url: string
  /** Holds the replica at what it has replayed: it still receives the primary's WAL, and applies none. */
  pauseReplay(): Promise<void>
  resumeReplay(): Promise<void>
  /** Resolves once the replica has replayed everything the primary had written when called. */
  caughtUp(timeoutMs?: number): Promise<void>
  /** Stops the replica (immediately) and removes its files. */
  destroy(): Promise<void>
}

export async function startStreamingReplica(primary: PrivatePostgres): Promise<StreamingReplica> {
  if (POSTGRES_BIN === null) throw new Error('no PostgreSQL under /usr/lib/postgresql (pg_basebackup)')
  const directory = await mkdtemp(join(tmpdir(), 'er-replica-'))
  const data = join(directory, 'data')
  const sockets = join(directory, 'sockets')
  await mkdir(sockets)
  const [uid, gid] = await postgresIds()
  for (const path of [directory, sockets]) await chown(path, uid, gid)
  const asPostgres = (command: string, args: string[]) => run('runuser', ['-u', 'postgres', '--', join(POSTGRES_BIN!, command), ...args], { timeout: 60_000 })
  const port = await freePort()
  const pgCtl = (...args: string[]) =>
    asPostgres('pg_ctl', ['-D', data, '-l', join(directory, 'server.log'), '-o', `-p ${port} -k ${sockets} -c listen_addresses=127.0.0.1 -c fsync=off`, ...args])
  try {
    // -R: standby.signal and the primary's address in postgresql.auto.conf; -X stream: the WAL of the
    // copy's time too; a fast checkpoint, not one spread over minutes.
    await asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', data, '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync'])
    await chmod(data, 0o700)
    await pgCtl('-w', 'start')
  } catch (error) {
    await pgCtl('stop', '-m', 'immediate').catch(() => undefined)
    await rm(directory, { recursive: true, force: true })
    throw error
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  const onReplica = (text: string) => withPostgresClient(url, (client) => client.query(text)).then(() => undefined)
  return {
    url,
    pauseReplay: () => onReplica('select pg_wal_replay_pause()'),
    resumeReplay: () => onReplica('select pg_wal_replay_resume()'),
    async caughtUp(timeoutMs = 10_000) {
      const target = await withPostgresClient(primary.url, async (client) => (await client.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn)
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const behind = await withPostgresClient(url, async (client) => Number((await client.query<{ behind: string }>('select pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn()) as behind', [target])).rows[0]!.behind))
        if (behind <= 0) return
        if (Date.now() > deadline) throw new Error(`the replica is still ${behind} bytes behind after ${timeoutMs} ms`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    async destroy() {
      await pgCtl('stop', '-m', 'immediate').catch(() => undefined)
      await rm(directory, { recursive: true, force: true })
    },
  }
}
