/** The public API of each entry, pinned: a change to it is a decision, made here on purpose. */
import { expect, it } from 'vitest'

it('the root entry exports the runtime-neutral public API and nothing else', async () => {
  expect(Object.keys(await import('../../src/index.js')).sort()).toEqual([
    'CONTRACT_FIELDS',
    'DependencyUnavailableError',
    'FACET_FIELDS',
    'FacetFilterTooBroadError',
    'GET_ENTITIES_LIMIT',
    'GFFS_LIMITS',
    'GffsError',
    'KeyManagerError',
    'MAX_MERGE_HOPS',
    'RECORD_LIMITS',
    'SEARCH_LIMIT',
    'TEXT_LIMITS',
    'WarehouseError',
    'changedEntities',
    'createApiKeyAuthenticator',
    'createEntityTexts',
    'createIndexer',
    'createKeyManager',
    'createRegistry',
    'createResidentSearchIndex',
    'createSearch',
    'createTokenBucketRateLimiter',
    'createWarehouse',
    'decodeChangeId',
    'encodeChangeId',
    'fuse',
    'generateApiKey',
    'hashApiKey',
    'isDependencyUnavailable',
    'isWellFormedApiKey',
    'matchesQualifiers',
    'otherEmbedderOf',
    'parseGffs',
    'parseNicknames',
    'parseWordRelatives',
    'queryWord',
    'renderEntityResource',
    'tallyFacets',
    'tokenize',
  ])
})

it('entity-registry/node exports the Node adapter, the file blob store, the NDJSON import and the embedded defaults', async () => {
  expect(Object.keys(await import('../../src/node/index.js')).sort()).toEqual([
    'OverlongLine',
    'SnapshotRefusedError',
    'answerClientError',
    'answerConnect',
    'collectAfterCrowds',
    'createFileBlobStore',
    'createWorkerTextExtractor',
    'importNdjson',
    'keepHeapUnder',
    'loadNicknames',
    'loadWordRelatives',
    'openEmbeddedRegistry',
    'parseOperation',
    'readLines',
    'serve',
    'toNodeListener',
  ])
})

it('entity-registry/telemetry exports metrics, logs, readiness and the admin handler', async () => {
  expect(Object.keys(await import('../../src/telemetry/index.js')).sort()).toEqual([
    'blobsCheck',
    'createAdminHandler',
    'createLogger',
    'createMetrics',
    'createReadiness',
    'createTelemetry',
    'searchCheck',
    'storeCheck',
    'timedStore',
  ])
})

it('entity-registry/embedders exports the embedders, none of which loads an optional package before it embeds', async () => {
  expect(Object.keys(await import('../../src/embedders/index.js')).sort()).toEqual([
    'createNoEmbedder',
    'createOpenAiEmbedder',
    'createTransformersEmbedder',
    'createWordVectorEmbedder',
  ])
})
