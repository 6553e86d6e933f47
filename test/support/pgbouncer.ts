/**
 * A PgBouncer of a test's own, in transaction mode, in front of the shared PostgreSQL server: what a
 * managed PostgreSQL's pooler (PgBouncer, RDS Proxy, Supavisor) puts between the registry and the
 * database. Each client transaction may run on another server session, so anything kept in a
 * session between transactions (a named statement, `SET`, a temporary table, a session lock) is
 * lost or seen by another client.
 */
import { randomBytes } from 'node:crypto'
import { POSTGRES_URL } from '../stores/each-store.js'
import { withPostgresClient } from './postgres-client.js'
import { PGBOUNCER, pgbouncerInstalled, startPgBouncerServer } from './pgbouncer-server.mjs'

/** Why PgBouncer cannot run here, or null; with ER_REQUIRE_POSTGRES=1 its absence fails instead. */
export const pgbouncerSkipReason =
  pgbouncerInstalled || process.env.ER_REQUIRE_POSTGRES === '1' ? null : `no ${PGBOUNCER} (apt-get install pgbouncer); set ER_REQUIRE_POSTGRES=1 to fail instead`

export interface PgBouncer {
  /**
   * A new schema on the shared server and a URL through PgBouncer whose connections use it. Not
   * `options=-c search_path=…` as the direct tests' URLs (PgBouncer 1.18 refuses that startup
   * parameter): a role of the schema's name, whose own `search_path` (the schema, then public) the
   * server sets at each of its sessions, as a deployment in a schema through a pooler would do.
   */
  freshSchema(): Promise<{ url: string; drop(): Promise<void> }>
  stop(): Promise<void>
}

/** PgBouncer on a free port in front of the shared server, `poolSize` server connections a database and role (3 by default, so that clients share sessions). */
export async function startPgBouncer({ poolSize = 3 }: { poolSize?: number } = {}): Promise<PgBouncer> {
  const server = await startPgBouncerServer({ upstream: POSTGRES_URL, poolSize })
  return {
    async freshSchema() {
      const role = `er_test_${randomBytes(6).toString('hex')}`
      // A superuser, as the direct tests' connections are: the search index creates extensions.
      await withPostgresClient(POSTGRES_URL, (client) =>
        client.query(`create role ${role} login superuser; create schema ${role} authorization ${role}; alter role ${role} set search_path = ${role}, public`),
      )
      return {
        url: server.urlAs(role),
        drop: () =>
          withPostgresClient(POSTGRES_URL, (client) =>
            client.query(`drop schema ${role} cascade; select pg_terminate_backend(pid) from pg_stat_activity where usename = '${role}'; drop role ${role}`),
          ).then(() => undefined),
      }
    },
    stop: () => server.stop(),
  }
}
