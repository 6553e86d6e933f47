import type { BlobInfo, BlobStore, ByteRange } from '../ports/blob-store.js'
import { DependencyUnavailableError } from '../ports/dependency.js'
import type { Readable } from 'node:stream'
import { nodeBackedStream } from '../blobs/node-backed-stream.js'
import { withNodeStallTimeout, withStallTimeout } from './stall-timeout.js'

/**
 * What the store needs of an S3 client: `@aws-sdk/client-s3`'s `S3Client` has it. Typed here so
 * that this module's types compile without the SDK, an optional peer dependency.
 */
export interface S3ClientLike {
  send(command: object, options?: { abortSignal?: AbortSignal }): Promise<unknown>
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
  /**
   * How long a call may wait for the object store's answer, and a download for its next bytes
   * (default 3000 ms): past it, the call fails as the store being unavailable (a 503 with
   * `Retry-After`) instead of holding the request open.
   */
  timeoutMs?: number
  /** How long an upload may make no progress (a part written) before it fails (default 60 s). */
  uploadTimeoutMs?: number
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
  const timeoutMs = options.timeoutMs ?? 3000
  const uploadTimeoutMs = options.uploadTimeoutMs ?? 60_000
  // Loaded at the first use: an application that keeps blobs elsewhere never loads the SDK.
  let loaded: Promise<{ sdk: Sdk; client: S3ClientLike }> | undefined
  const load = () =>
    (loaded ??= import('@aws-sdk/client-s3').then((sdk) => ({ sdk, client: options.client ?? clientFromEnvironment(sdk, timeoutMs, uploadTimeoutMs) })).catch((error: unknown) => {
      loaded = undefined
      throw new Error(`the S3 blob store needs @aws-sdk/client-s3 and @aws-sdk/lib-storage: npm install them (${(error as Error).message})`)
    }))
  const keyOf = (key: string) => {
    if (!SAFE_KEY.test(key)) throw new Error('invalid blob key')
    return `${prefix}${key}`
  }
  /**
   * One call, bounded by the timeout; aborted only until it has answered, so that a long body is
   * streamed to its end. Anything but a missing object means the store is away.
   */
  const send = async (command: object): Promise<unknown> => {
    const { client } = await load()
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), timeoutMs)
    try {
      return await client.send(command, { abortSignal: controller.signal })
    } catch (error) {
      if (controller.signal.aborted) throw unavailable(new Error(`no answer within ${timeoutMs} ms`, { cause: error }))
      throw isNotFound(error) ? error : unavailable(error)
    } finally {
      clearTimeout(timer)
    }
  }

  return {
    async put(key, bytes) {
      const { client } = await load()
      const { Upload } = await import('@aws-sdk/lib-storage')
      const controller = new AbortController()
      const upload = new Upload({
        client: client as InstanceType<Sdk['S3Client']>,
        params: { Bucket: bucket, Key: keyOf(key), Body: bytes },
        partSize: options.partSize ?? 8 * 1024 * 1024,
        queueSize: 1,
        abortController: controller,
      })
      // A large upload may take long, but not with nothing written for a while.
      let timer: ReturnType<typeof setTimeout> | undefined
      const watch = () => {
        clearTimeout(timer)
        timer = setTimeout(() => controller.abort(), uploadTimeoutMs)
      }
      upload.on('httpUploadProgress', watch)
      watch()
      try {
        await upload.done()
      } catch (error) {
        // A stream the caller gave that failed is the caller's error, not the store's.
        throw controller.signal.aborted || isFromTheStore(error) ? unavailable(error) : error
      } finally {
        clearTimeout(timer)
      }
    },

    async stat(key) {
      const { sdk } = await load()
      try {
        const head = (await send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: keyOf(key) }))) as { ContentLength?: number; ETag?: string }
        return infoOf(head.ContentLength, head.ETag)
      } catch (error) {
        if (isNotFound(error)) return null
        throw error
      }
    },

    async get(key, range?: ByteRange) {
      const { sdk } = await load()
      try {
        const object = (await send(
          new sdk.GetObjectCommand({ Bucket: bucket, Key: keyOf(key), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
        )) as { Body?: SdkBody }
        if (object.Body === undefined) return null
        const stalled = () => unavailable(new Error(`the object store sent nothing for ${timeoutMs} ms`))
        if (isNodeReadable(object.Body)) {
          // On Node the body is the HTTP response itself: handed on as a Node stream, it is piped to
          // the client without the Web stream stages that each held a chunk for a stalled client.
          return nodeBackedStream(await withNodeStallTimeout(object.Body, timeoutMs, stalled))
        }
        return withStallTimeout(object.Body.transformToWebStream(), timeoutMs, stalled)
      } catch (error) {
        if (isNotFound(error)) return null
        throw error
      }
    },

    async delete(key) {
      const { sdk } = await load()
      await send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: keyOf(key) }))
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

/**
 * Calls that fail fast enough to be retried once within the bound: connecting may take the timeout,
 * and an answer (an upload part's included) the upload bound. No socket idle timeout: it would also
 * fire while a download waits for a slow client; a stalled body is caught by `withStallTimeout`.
 * No cap on connections (the SDK's is 50): a download holds its connection until its client has
 * read it, so 50 clients that stopped reading would make every other download wait and fail.
 */
function clientFromEnvironment(sdk: Sdk, timeoutMs: number, uploadTimeoutMs: number): S3ClientLike {
  const environment = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {}
  const endpoint = environment.AWS_ENDPOINT_URL_S3 ?? environment.AWS_ENDPOINT_URL
  return new sdk.S3Client({
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    // S3-compatible servers ignore the region, but the SDK will not sign without one.
    ...(endpoint && !environment.AWS_REGION && !environment.AWS_DEFAULT_REGION ? { region: 'us-east-1' } : {}),
    maxAttempts: 2,
    requestHandler: {
      connectionTimeout: timeoutMs,
      requestTimeout: uploadTimeoutMs,
      throwOnRequestTimeout: true,
      httpAgent: { maxSockets: Infinity },
      httpsAgent: { maxSockets: Infinity },
    },
  })
}

/** The object store is away (unreachable, not answering, or failing with a 5xx). */
function unavailable(error: unknown): DependencyUnavailableError {
  return new DependencyUnavailableError('blobs', `object storage is unavailable: ${(error as Error).message}`, 1, { cause: error })
}

/** A failure of an SDK call (the SDK gives each its `$metadata`), not of the stream the caller gave. */
function isFromTheStore(error: unknown): boolean {
  return typeof error === 'object' && error !== null && '$metadata' in error
}

/** The SDK's `GetObject` body: a Node stream on Node, with a Web stream view everywhere. */
type SdkBody = { transformToWebStream(): ReadableStream<Uint8Array> } | (Readable & { transformToWebStream(): ReadableStream<Uint8Array> })

function isNodeReadable(body: SdkBody): body is Readable & SdkBody {
  return typeof (body as Partial<Readable>).pipe === 'function' && typeof (body as Partial<Readable>).on === 'function'
}

function infoOf(size: number | undefined, etag: string | undefined): BlobInfo {
  return { size: size ?? 0, version: (etag ?? '').replace(/^W\//, '').replaceAll('"', '') }
}

function isNotFound(error: unknown): boolean {
  const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } }
  return name === 'NotFound' || name === 'NoSuchKey' || $metadata?.httpStatusCode === 404
}
