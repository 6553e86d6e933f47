export const PGBOUNCER: string
export const pgbouncerInstalled: boolean

export interface PgBouncerServer {
  port: number
  /** A URL through PgBouncer to the upstream's database, as `role`. */
  urlAs(role: string): string
  stop(): Promise<void>
}

/** Starts PgBouncer in transaction mode in front of `upstream`, at most `poolSize` server connections a database and role. */
export function startPgBouncerServer(options: { upstream: string; poolSize: number }): Promise<PgBouncerServer>
