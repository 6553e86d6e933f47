/**
 * The store kit on PostgreSQL through PgBouncer in transaction mode (`pool_mode = transaction`, 3
 * server connections): nothing the store does may rely on a session between transactions. The store
 * is made from a connection string, as `--database` makes it, so that it finds the pooler by itself.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, it } from 'vitest'
import { createPostgresStore } from '../../src/kysely/index.js'
import { describeEntityStore } from '../../src/testing/index.js'
import { pgbouncerSkipReason, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js'
import { storeDialects } from './each-store.js'

const skipReason = storeDialects.find((dialect) => dialect.name === 'postgres')!.skipReason ?? pgbouncerSkipReason

describe.skipIf(skipReason !== null)(`store kit [postgres through PgBouncer]${skipReason ? ` skipped: ${skipReason}` : ''}`, () => {
  let bouncer: PgBouncer
  beforeAll(async () => {
    bouncer = await startPgBouncer()
  })
  afterAll(async () => {
    await bouncer?.stop()
  })
  describeEntityStore(
    'through PgBouncer',
    async () => {
      const schema = await bouncer.freshSchema()
      const store = await createPostgresStore({ connectionString: schema.url })
      return {
        ...store,
        async close() {
          await store.close()
          await schema.drop()
        },
      }
    },
    { describe, it, beforeEach, afterEach },
  )
})
