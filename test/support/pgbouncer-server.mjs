// A PgBouncer process in transaction mode in front of a PostgreSQL server, for the tests
// (test/support/pgbouncer.ts) and bench/http.mjs --pgbouncer: a config file in a temporary directory,
// a free port on 127.0.0.1, trust authentication (each role is looked up on the server by
// `auth_query`), `pool_mode = transaction`.
import { execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

export const PGBOUNCER = '/usr/sbin/pgbouncer'
export const pgbouncerInstalled = existsSync(PGBOUNCER)

/** @param {{ upstream: string, poolSize: number }} options */
export async function startPgBouncerServer({ upstream, poolSize }) {
  const server = new URL(upstream)
  const directory = mkdtempSync(join(tmpdir(), 'er-pgbouncer-'))
  const port = await freePort()
  const admin = decodeURIComponent(server.username || 'postgres')
  writeFileSync(join(directory, 'users.txt'), `"${admin}" ""\n`)
  writeFileSync(
    join(directory, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
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
      // Server connections of a role dropped (a test's schema) go soon, not after the default 10 minutes.
      'server_idle_timeout = 5',
      `logfile = ${join(directory, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  )
  // PgBouncer refuses to run as root: then as the postgres OS user, as the tests' private servers run.
  const asRoot = process.getuid?.() === 0
  if (asRoot) chownSync(directory, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })))
  const bouncer = spawn(asRoot ? 'runuser' : PGBOUNCER, [...(asRoot ? ['-u', 'postgres', '--', PGBOUNCER] : []), join(directory, 'pgbouncer.ini')], { stdio: 'ignore' })
  let gone = false
  const exited = new Promise((resolve) => bouncer.once('exit', () => resolve((gone = true))))
  const database = server.pathname.slice(1) || 'postgres'
  const urlAs = (role) => `postgres://${role}@127.0.0.1:${port}/${database}`
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: urlAs(admin) })
    client.on('error', () => {})
    try {
      await client.connect()
      await client.end()
      break
    } catch (error) {
      if (gone || attempt >= 100) {
        bouncer.kill()
        throw new Error(`PgBouncer did not start (${error instanceof Error ? error.message : String(error)})`)
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  return {
    port,
    urlAs,
    async stop() {
      bouncer.kill('SIGTERM')
      await exited
      rmSync(directory, { recursive: true, force: true })
    },
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}
