import pg from 'pg'

/** Runs `work` on a connection of its own to `connectionString`, ended afterwards. */
export async function withPostgresClient<T>(connectionString: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  // A refused connection fails at once; the long timeout only spares a busy machine a false skip.
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 10_000 })
  // A client whose connection failed may still emit 'error'; the failure is reported by connect().
  client.on('error', () => {})
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}
