export { createKyselyStore, type KyselyStore, type KyselyStoreOptions, type StoreTuning } from './kysely-store.js'
export { createSqliteStore, registerSqliteFunctions, type SqliteStoreOptions, type SqliteFunctionHost } from './sqlite.js'
export {
  createPostgresStore,
  createPgliteStore,
  type PostgresStoreOptions,
  type PostgresConnection,
  type PgliteStoreOptions,
} from './postgres.js'
export { openStore, storeKindOf, type OpenStoreOptions } from './open-store.js'
export type { DialectName } from './sql-dialect.js'
export type { RegistryDatabase } from './schema.js'
