import type { BlobInfo, BlobStore, ByteRange } from '../ports/blob-store.js'

/**
 * What the store needs of an S3 client: `@aws-sdk/client-s3`'s `S3Client` has it. Typed here so
 * that this module's types compile without the SDK, an optional peer dependency.
 */
export interface S3ClientLike {
  send(command: object): Promise<unknown>
}

export interface S3BlobStoreOptions {
  bucket: string
  /** Prepended to every key (`renditions/`); default none. */
  prefix?: string
  /**
   * Your client; without one, a client is made from the standard AWS environment (`AWS_REGION`,
   * credentials, `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`), with path-style addressing whenever
   * an endpoint is set, as MinIO and most S3-compatible servers need.
   */
  client?: S3ClientLike
  /** Multipart part size for uploads (default 8 MiB): memory per upload stays near one part. */
  partSize?: number
}

const SAFE_KEY = /^[0-9A-Za-z_-]+$/

type Sdk = typeof import('@aws-sdk/client-s3')

/**
 * Rendition bytes on S3-compatible object storage (S3, R2, MinIO). Uploads stream in parts and
 * downloads stream from the object, so memory does not grow with a blob; sizes, ranges and ETags
 * come from the object store's own metadata.
 */
export function createS3BlobStore(options: S3BlobStoreOptions): BlobStore {
  const prefix = options.prefix ?? ''
  const bucket = options.bucket
  // Loaded at the first use: an application that keeps blobs elsewhere never loads the SDK.
  let loaded: Promise<{ sdk: Sdk; client: S3ClientLike }> | undefined
  const load = () =>
    (loaded ??= import('@aws-sdk/client-s3').then((sdk) => ({ sdk, client: options.client ?? clientFromEnvironment(sdk) })).catch((error: unknown) => {
      loaded = undefined
      throw new Error(`the S3 blob store needs @aws-sdk/client-s3 and @aws-sdk/lib-storage: npm install them (${(error as Error).message})`)
    }))
  const keyOf = (key: string) => {
    if (!SAFE_KEY.test(key)) throw new Error('invalid blob key')
    return `${prefix}${key}`
  }

  return {
    async put(key, bytes) {
      const { client } = await load()
      const { Upload } = await import('@aws-sdk/lib-storage')
      const upload = new Upload({
        client: client as InstanceType<Sdk['S3Client']>,
        params: { Bucket: bucket, Key: keyOf(key), Body: bytes },
        partSize: options.partSize ?? 8 * 1024 * 1024,
        queueSize: 1,
      })
      await upload.done()
    },

    async stat(key) {
      const { sdk, client } = await load()
      try {
        const head = (await client.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: keyOf(key) }))) as { ContentLength?: number; ETag?: string }
        return infoOf(head.ContentLength, head.ETag)
      } catch (error) {
        if (isNotFound(error)) return null
        throw error
      }
    },

    async get(key, range?: ByteRange) {
      const { sdk, client } = await load()
      try {
        const object = (await client.send(
          new sdk.GetObjectCommand({ Bucket: bucket, Key: keyOf(key), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
        )) as { Body?: { transformToWebStream(): ReadableStream<Uint8Array> } }
        return object.Body?.transformToWebStream() ?? null
      } catch (error) {
        if (isNotFound(error)) return null
        throw error
      }
    },

    async delete(key) {
      const { sdk, client } = await load()
      await client.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: keyOf(key) }))
    },
  }
}

/** `s3://bucket/prefix` as the store's options (the prefix ends with `/` when given). */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url)
  if (match === null || match[1] === '') throw new Error(`not an s3://bucket/prefix address: ${url}`)
  const path = (match[2] ?? '').replace(/\/+$/, '')
  return { bucket: match[1]!, prefix: path === '' ? '' : `${path}/` }
}

function clientFromEnvironment(sdk: Sdk): S3ClientLike {
  const environment = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {}
  const endpoint = environment.AWS_ENDPOINT_URL_S3 ?? environment.AWS_ENDPOINT_URL
  return new sdk.S3Client({
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    // S3-compatible servers ignore the region, but the SDK will not sign without one.
    ...(endpoint && !environment.AWS_REGION && !environment.AWS_DEFAULT_REGION ? { region: 'us-east-1' } : {}),
  })
}

function infoOf(size: number | undefined, etag: string | undefined): BlobInfo {
  return { size: size ?? 0, version: (etag ?? '').replace(/^W\//, '').replaceAll('"', '') }
}

function isNotFound(error: unknown): boolean {
  const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } }
  return name === 'NotFound' || name === 'NoSuchKey' || $metadata?.httpStatusCode === 404
}
