/**
 * A PgBouncer of a test's own, in transaction mode, in front of the shared PostgreSQL server: what a
 * managed PostgreSQL's pooler (PgBouncer, RDS Proxy, Supavisor) puts between the registry and the
 * database. Each client transaction may run on another server session, so anything kept in a
 * session between transactions (a named statement, `SET`, a temporary table, a session lock) is
 * lost or seen by another client.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { POSTGRES_URL } from '../stores/each-store.js'
import { freePort } from './free-port.js'
import { withPostgresClient } from './postgres-client.js'
import { postgresIds } from './private-postgres.js'

const PGBOUNCER = '/usr/sbin/pgbouncer'

/** Why PgBouncer cannot run here, or null; with ER_REQUIRE_POSTGRES=1 its absence fails instead. */
export const pgbouncerSkipReason =
  existsSync(PGBOUNCER) || process.env.ER_REQUIRE_POSTGRES === '1' ? null : `no ${PGBOUNCER} (apt-get install pgbouncer); set ER_REQUIRE_POSTGRES=1 to fail instead`

export interface PgBouncer {
  /**
   * A new schema on the shared server and a URL through PgBouncer whose connections use it. Not
   * `options=-c search_path=…` as the direct tests' URLs (PgBouncer 1.18 refuses that startup
   * parameter): a role of the schema's name, whose own `search_path` the server sets at each of its
   * sessions, as a deployment in a schema through a pooler would do.
   */
  freshSchema(): Promise<{ url: string; drop(): Promise<void> }>
  stop(): Promise<void>
}

/**
 * Starts PgBouncer on a free port: `pool_mode = transaction`, at most `poolSize` server
 * connections a database and role (3 by default, so that clients share sessions), many clients,
 * trust (a role is looked up on the server by `auth_query`).
 */
export async function startPgBouncer({ poolSize = 3 }: { poolSize?: number } = {}): Promise<PgBouncer> {
  const upstream = new URL(POSTGRES_URL)
  const directory = await mkdtemp(join(tmpdir(), 'er-pgbouncer-'))
  const port = await freePort()
  const admin = decodeURIComponent(upstream.username || 'postgres')
  await writeFile(join(directory, 'users.txt'), `"${admin}" ""\n`)
  await writeFile(
    join(directory, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${upstream.hostname} port=${upstream.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(directory, 'users.txt')}`,
      `auth_user = ${admin}`,
      'auth_query = select usename, passwd from pg_shadow where usename = $1',
      'pool_mode = transaction',
      'max_client_conn = 2000',
      `default_pool_size = ${poolSize}`,
      // Server connections of a dropped schema's role go soon, not after the default 10 minutes.
      'server_idle_timeout = 5',
      `logfile = ${join(directory, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  )
  // PgBouncer refuses to run as root: as the postgres OS user, as the private servers run.
  const asRoot = process.getuid?.() === 0
  if (asRoot) await chown(directory, ...(await postgresIds()))
  const bouncer = spawn(asRoot ? 'runuser' : PGBOUNCER, [...(asRoot ? ['-u', 'postgres', '--', PGBOUNCER] : []), join(directory, 'pgbouncer.ini')], { stdio: 'ignore' })
  const exited = new Promise<void>((resolve) => bouncer.once('exit', () => resolve()))
  const database = upstream.pathname.slice(1) || 'postgres'
  const urlAs = (role: string) => `postgres://${role}@127.0.0.1:${port}/${database}`
  await waitForConnection(urlAs(admin), exited)
  return {
    async freshSchema() {
      const role = `er_test_${randomBytes(6).toString('hex')}`
      // A superuser, as the direct tests' connections are: the search index creates extensions.
      await withPostgresClient(POSTGRES_URL, (client) =>
        client.query(`create role ${role} login superuser; create schema ${role} authorization ${role}; alter role ${role} set search_path = ${role}, public`),
      )
      return {
        url: urlAs(role),
        drop: () =>
          withPostgresClient(POSTGRES_URL, (client) =>
            client.query(`drop schema ${role} cascade; select pg_terminate_backend(pid) from pg_stat_activity where usename = '${role}'; drop role ${role}`),
          ).then(() => undefined),
      }
    },
    async stop() {
      bouncer.kill('SIGTERM')
      await exited
      await rm(directory, { recursive: true, force: true })
    },
  }
}

async function waitForConnection(url: string, exited: Promise<void>): Promise<void> {
  let gone = false
  void exited.then(() => (gone = true))
  for (let attempt = 0; ; attempt++) {
    try {
      await withPostgresClient(url, (client) => client.query('select 1'))
      return
    } catch (error) {
      if (gone || attempt >= 100) throw new Error(`PgBouncer did not start (${error instanceof Error ? error.message : String(error)})`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}
