// The registry over services alone: entities, API keys and the search index in PostgreSQL, rendition
// bytes on S3. An instance keeps nothing of its own, so a serverless platform may start as many as it
// likes, freeze them between requests and drop them at any time. None of them indexes: see README.
import { readFile } from 'node:fs/promises'
import {
  createApiKeyAuthenticator,
  createIndexer,
  createRegistry,
  createSearch,
  createTokenBucketRateLimiter,
  otherEmbedderOf,
  parseNicknames,
  type Registry,
} from 'entity-registry'
import { createNoEmbedder, createWordVectorEmbedder } from 'entity-registry/embedders'
import { createPostgresStore, type KyselyStore } from 'entity-registry/kysely'
import { createPostgresSearchIndex } from 'entity-registry/postgres-search'
import { createS3BlobStore, parseS3Url } from 'entity-registry/s3'

/**
 * Files of the package read at run time: named by URLs on this module, which the bundler sees and
 * copies into the build, so that they are found wherever the server runs from (`.next/standalone`).
 */
const NICKNAMES = new URL('../node_modules/entity-registry/assets/nicknames/names.csv', import.meta.url)
const WORD_VECTORS = new URL('../node_modules/entity-registry/assets/word-vectors.bin', import.meta.url)

function required(name: string): string {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set (see the example's README)`)
  return value
}

/**
 * `EMBEDDER`: `words` (the bundled word vectors, the CLI's default; the database needs pgvector) or
 * `none` (full text and names alone, no pgvector). The index must have been built with the same.
 */
function embedderNamed(name: string) {
  if (name === 'none') return createNoEmbedder()
  if (name === 'words') return createWordVectorEmbedder({ file: WORD_VECTORS })
  throw new Error(`EMBEDDER is "${name}": use words or none`)
}

async function openRegistry(store: KyselyStore): Promise<Registry> {
  const embedderName = process.env.EMBEDDER ?? 'words'
  const embedder = embedderNamed(embedderName)
  const index = await createPostgresSearchIndex({ db: store.db, dimensions: embedder.dimensions })
  const other = otherEmbedderOf(await index.state(), embedder)
  if (other !== null) {
    throw new Error(`the search index was built with the embedder ${other}, not ${embedder.id}: run entity-registry reindex --search postgres --embedder ${embedderName}`)
  }
  // Never started: it only tells how far the index is behind the feed, which every search answers
  // in `Search-Index-Lag`.
  const indexer = createIndexer({ store, index, embedder })
  const nicknames = parseNicknames(await readFile(NICKNAMES, 'utf8'))
  const apiKeys = (process.env.ENTITY_REGISTRY_API_KEYS ?? '').split(',').filter((key) => key !== '')
  const rateLimit = Number(process.env.RATE_LIMIT ?? 600)
  return createRegistry({
    store,
    blobs: createS3BlobStore(parseS3Url(required('BLOBS_URL'))),
    search: createSearch(store, { index, embedder, nicknames, lag: () => indexer.lag() }),
    auth: createApiKeyAuthenticator({ keys: apiKeys, store }),
    // Counted in each instance: give every instance's share, or count in Redis (entity-registry/redis).
    ...(rateLimit > 0 ? { rateLimit: createTokenBucketRateLimiter({ limit: rateLimit }) } : {}),
    baseUrl: '/api/registry',
    explorer: true,
  })
}

let opening: Promise<Registry> | undefined

/**
 * The registry, opened at an instance's first request (not while `next build` loads the route).
 * An opening that failed (the database away during a cold start) is logged and tried again at the
 * next request, rather than answering 500 for the rest of the instance's life.
 */
export const registry: Pick<Registry, 'fetch'> = {
  async fetch(request, client) {
    opening ??= createPostgresStore({ connectionString: required('DATABASE_URL') }).then((store) =>
      openRegistry(store).catch(async (error: unknown) => {
        await store.close()
        throw error
      }),
    )
    const opened = await opening.catch((error: unknown) => {
      opening = undefined
      console.error(`the registry did not open: ${(error as Error).message}`)
      throw error
    })
    return opened.fetch(request, client)
  },
}
