import type { Kysely, Selectable } from 'kysely'
import type { ApiKeyStore, StoredApiKey } from '../ports/auth.js'
import type { ApiKeysTable, RegistryDatabase } from './schema.js'

/** The API-key part of a Kysely store: the `api_keys` and `organizations` tables. */
export function createKyselyApiKeyStore(db: Kysely<RegistryDatabase>): ApiKeyStore {
  return {
    async findApiKey(hash) {
      const row = await db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst()
      return row === undefined ? null : toStoredApiKey(row)
    },

    async addApiKey({ hash, ...key }) {
      return db.transaction().execute(async (transaction) => {
        await transaction
          .insertInto('organizations')
          .values({ name: key.org, created_at: key.createdAt })
          .onConflict((conflict) => conflict.doNothing())
          .execute()
        // A clash on the hash or on the id inserts nothing.
        const inserted = await transaction
          .insertInto('api_keys')
          .values({
            key_hash: hash,
            id: key.id,
            org: key.org,
            label: key.label,
            created_at: key.createdAt,
            expires_at: key.expiresAt,
            last_used_at: key.lastUsedAt,
            revoked_at: key.revokedAt,
          })
          .onConflict((conflict) => conflict.doNothing())
          .executeTakeFirst()
        return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0
      })
    },

    async listApiKeys({ org } = {}) {
      let query = db.selectFrom('api_keys').selectAll().orderBy('org').orderBy('created_at').orderBy('id')
      if (org !== undefined) query = query.where('org', '=', org)
      return (await query.execute()).map(toStoredApiKey)
    },

    async revokeApiKeys(which, revokedAt) {
      const rows = await db
        .updateTable('api_keys')
        .set({ revoked_at: revokedAt })
        .where('revoked_at', 'is', null)
        .where('id' in which ? 'id' : 'org', '=', 'id' in which ? which.id : which.org)
        .returning('id')
        .execute()
      return rows.map((row) => row.id).sort()
    },

    async recordApiKeyUse(uses) {
      for (const { id, usedAt } of uses) {
        await db
          .updateTable('api_keys')
          .set({ last_used_at: usedAt })
          .where('id', '=', id)
          .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', usedAt)]))
          .execute()
      }
    },

    async listApiKeyHashes() {
      const rows = await db.selectFrom('api_keys').select('key_hash').where('revoked_at', 'is', null).execute()
      return rows.map((row) => row.key_hash)
    },

    async listOrganizations() {
      const rows = await db.selectFrom('organizations').selectAll().orderBy('name').execute()
      return rows.map((row) => ({ name: row.name, createdAt: row.created_at }))
    },

    async countApiKeys() {
      const { count } = await db
        .selectFrom('api_keys')
        .select((eb) => eb.fn.countAll().as('count'))
        .executeTakeFirstOrThrow()
      return Number(count)
    },
  }
}

function toStoredApiKey(row: Selectable<ApiKeysTable>): StoredApiKey {
  return {
    id: row.id,
    org: row.org,
    label: row.label,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  }
}
