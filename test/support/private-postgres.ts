/**
 * A PostgreSQL server of a test's own (initdb into a temporary directory, as the `postgres` OS
 * user), which it may stop, restart and cut connections of without disturbing the shared server
 * other test files use at the same time.
 */
import { execFile } from 'node:child_process'
import { chown, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { existsSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { freePort } from './free-port.js'

const run = promisify(execFile)

/** The newest PostgreSQL installed the Debian way (/usr/lib/postgresql/VERSION/bin), or null. */
export const POSTGRES_BIN = (() => {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return null
  const newest = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0]
  return newest !== undefined && existsSync(join(root, newest, 'bin', 'initdb')) ? join(root, newest, 'bin') : null
})()

/** Why a private server cannot run here, or null; with ER_REQUIRE_POSTGRES=1 its absence fails instead. */
export const privatePostgresSkipReason =
  POSTGRES_BIN !== null || process.env.ER_REQUIRE_POSTGRES === '1' ? null : 'no initdb under /usr/lib/postgresql; set ER_REQUIRE_POSTGRES=1 to fail instead'

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` (trust authentication). */
  url: string
  /** The same database over the server's Unix socket, whose file is gone while the server is stopped. */
  socketUrl: string
  port: number
  stop(): Promise<void>
  start(): Promise<void>
  /** `pg_ctl restart -m fast`: every connection ends, and the server is back when this resolves. */
  restart(): Promise<void>
  /** Ends every other connection to the database; how many it ended. */
  terminateBackends(): Promise<number>
  /** Stops the server (immediately) and removes its files. */
  destroy(): Promise<void>
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  if (POSTGRES_BIN === null) throw new Error('no PostgreSQL under /usr/lib/postgresql (initdb)')
  const directory = await mkdtemp(join(tmpdir(), 'er-postgres-'))
  const data = join(directory, 'data')
  const sockets = join(directory, 'sockets')
  await mkdir(sockets)
  for (const path of [directory, sockets]) await chown(path, ...(await postgresIds()))
  // The server refuses to run as root: every command runs as the postgres OS user.
  const asPostgres = (command: string, args: string[]) => run('runuser', ['-u', 'postgres', '--', join(POSTGRES_BIN!, command), ...args], { timeout: 60_000 })
  await asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'])
  const port = await freePort()
  const serverOptions = `-p ${port} -k ${sockets} -c listen_addresses=127.0.0.1 -c fsync=off`
  const pgCtl = (...args: string[]) => asPostgres('pg_ctl', ['-D', data, '-l', join(directory, 'server.log'), '-o', serverOptions, '-w', ...args]).then(() => undefined)
  await pgCtl('start')
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  return {
    url,
    socketUrl: `postgres://postgres@/postgres?host=${encodeURIComponent(sockets)}&port=${port}`,
    port,
    stop: () => pgCtl('stop', '-m', 'fast'),
    start: () => pgCtl('start'),
    restart: () => pgCtl('restart', '-m', 'fast'),
    async terminateBackends() {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        const { rowCount } = await client.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()')
        return rowCount ?? 0
      } finally {
        await client.end()
      }
    },
    async destroy() {
      await pgCtl('stop', '-m', 'immediate').catch(() => undefined)
      await rm(directory, { recursive: true, force: true })
    },
  }
}

/** The `postgres` OS user's uid and gid, which own a server's files. */
export async function postgresIds(): Promise<[number, number]> {
  const { stdout } = await run('id', ['-u', 'postgres'])
  const { stdout: group } = await run('id', ['-g', 'postgres'])
  return [Number(stdout.trim()), Number(group.trim())]
}

