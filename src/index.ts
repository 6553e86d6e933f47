/**
 * `entity-registry`: the runtime-neutral core. No Node built-in is reachable from here (a test bundles
 * it for a neutral platform); Node-only parts are in `entity-registry/node`.
 */
export { createRegistry, type Registry, type RegistryOptions } from './registry.js'
export type { Answer, DeferredBody, RequestView } from './http/answer.js'
export { renderEntityResource } from './contract/resource-json.js'
export type { ResourceTemplate } from './contract/resource-template.js'
export { createApiKeyAuthenticator, type ApiKeyAuthenticator, type ApiKeyAuthenticatorOptions } from './auth/api-keys.js'
export { generateApiKey, hashApiKey, isWellFormedApiKey } from './auth/key-format.js'
export {
  createKeyManager,
  KeyManagerError,
  type KeyManager,
  type KeyManagerOptions,
  type KeyManagerErrorCode,
  type ApiKeyInfo,
  type ApiKeyState,
  type ApiKeyEvent,
  type CreateKeyRequest,
  type OrganizationInfo,
} from './auth/key-manager.js'
export { createTokenBucketRateLimiter, type TokenBucketOptions } from './rate-limit/token-bucket.js'
export { createWarehouse } from './warehouse/operations.js'
export { createSearch, fuse, SEARCH_LIMIT, type Search, type SearchOptions } from './search/search-service.js'
export { changedEntities, createIndexer, otherEmbedderOf, type Indexer, type IndexerOptions } from './search/indexer.js'
export { type ChangedEntities, createResidentSearchIndex, type ResidentSearchIndex, type ResidentSearchIndexOptions } from './resident/index.js'
export { createEntityTexts, type EntityTexts, type EntityTextsOptions, type TextExtractor } from './texts/entity-texts.js'
export { TEXT_LIMITS, type Extraction } from './texts/limits.js'
export { queryWord, tokenize } from './search/text.js'
export { parseNicknames, type Nicknames } from './search/nicknames.js'
export { parseWordRelatives, type WordRelatives } from './search/word-relatives.js'
export { RECORD_LIMITS } from './warehouse/record-limits.js'
export * from './ports/index.js'
export { parseGffs, matchesQualifiers, GffsError, GFFS_LIMITS, type ParseOptions, type GffsErrorCode } from './gffs/index.js'
export type { GffsQuery, Qualifier, TextTerm, EqualsQualifier, ContainsQualifier, CompareQualifier, RangeQualifier } from './gffs/index.js'
export type { StoredEntity, StoredChange, StoredText, StoredRendition, PublicSnapshot, EntityState, ChangeType } from './contract/entity.js'
export { CONTRACT_FIELDS, FACET_FIELDS, type ContractField, type FacetField } from './contract/fields.js'
export { tallyFacets } from './contract/facets.js'
export { MAX_MERGE_HOPS } from './contract/merges.js'
export { encodeChangeId, decodeChangeId } from './contract/change-id.js'
