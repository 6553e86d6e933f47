import type { BlobInfo, BlobStore, ByteRange } from '../ports/blob-store.js'
import { DependencyUnavailableError } from '../ports/dependency.js'
import { nodeBackedStream } from '../blobs/node-backed-stream.js'
import { withStallTimeout } from './stall-timeout.js'
import { createBudget } from '../blobs/budget.js'
import { windowedDownload, type ReadWindow } from '../blobs/windowed-download.js'

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
  /**
   * Calls to the object store in flight at once (default 32; uploads not counted); more wait their
   * turn within the timeout. A crowd of downloads each in a call of its own kept hundreds of the SDK's
   * calls alive at once, and the process's memory grew with them.
   */
  concurrentCalls?: number
}

const SAFE_KEY = /^[0-9A-Za-z_-]+$/

type Sdk = typeof import('@aws-sdk/client-s3')

/**
 * Rendition bytes on S3-compatible object storage (S3, R2, MinIO). Uploads stream in parts and
 * downloads read the object a range at a time, so memory does not grow with a blob nor with the
 * clients that stop reading; sizes, ranges and ETags come from the object store's own metadata.
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
  const calls = createBudget(options.concurrentCalls ?? 32)
  /**
   * One call: it waits its turn among the calls in flight, and the wait and the answer together are
   * bounded by the timeout (and ended by `signal`, when given). The turn is held while `finish` uses
   * the answer (reads its body), then given back. Anything but a missing object, a range past its end
   * or a changed version means the store is away.
   */
  const send = async <T = unknown>(command: object, signal?: AbortSignal, finish: (answer: unknown) => Promise<T> | T = (answer) => answer as T): Promise<T> => {
    const { client } = await load()
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), timeoutMs)
    const abort = () => controller.abort()
    signal?.addEventListener('abort', abort)
    let turn = 0
    try {
      let answer: unknown
      try {
        turn = await calls.take(1, 1, controller.signal)
        answer = await client.send(command, { abortSignal: controller.signal })
      } catch (error) {
        if (signal?.aborted) throw error
        if (controller.signal.aborted) throw unavailable(new Error(`no answer within ${timeoutMs} ms`, { cause: error }))
        throw isNotFound(error) || statusOf(error) === 412 || statusOf(error) === 416 ? error : unavailable(error)
      } finally {
        clearTimeout(timer)
      }
      return await finish(answer)
    } finally {
      calls.give(turn)
      signal?.removeEventListener('abort', abort)
    }
  }
  /**
   * The bytes `from` to `to` (inclusive) whole, with the object's size; only of `version` when given
   * (it changed: an error, not bytes of two versions in one download). Null when there is no object.
   */
  const readWindow = async (key: string, from: number, to: number, version: { etag?: string }, signal: AbortSignal): Promise<ReadWindow | null> => {
    const { sdk } = await load()
    const command = new sdk.GetObjectCommand({ Bucket: bucket, Key: keyOf(key), Range: `bytes=${from}-${to}`, ...(version.etag ? { IfMatch: version.etag } : {}) })
    try {
      return await send(command, signal, (object) => windowOf(object as RangeAnswer, version))
    } catch (error) {
      if (isNotFound(error)) return null
      // A range from 0 of an empty object is past its end: the object is there, with no bytes.
      if (statusOf(error) === 416 && from === 0) return { chunks: [], size: 0 }
      throw error
    }
  }
  /** A range's answer read whole, checked against `version` (and setting it, at the first range). */
  const windowOf = async (object: RangeAnswer, version: { etag?: string }): Promise<ReadWindow> => {
    const size = Number(/\/(\d+)$/.exec(object.ContentRange ?? '')?.[1] ?? NaN)
    if (!Number.isSafeInteger(size)) throw unavailable(new Error('the object store answered a range without its size'))
    // Checked here too: not every S3-compatible server honours If-Match (s3rver does not).
    if (version.etag !== undefined && object.ETag !== version.etag) {
      if (object.Body) discard(object.Body)
      throw new Error('the object changed during the download')
    }
    version.etag ??= object.ETag
    // s3rver answers a range of an empty object, announcing a byte it never sends.
    if (object.Body === undefined || size === 0) {
      if (object.Body) discard(object.Body)
      return { chunks: [], size }
    }
    const stalled = () => unavailable(new Error(`the object store sent nothing for ${timeoutMs} ms`))
    // Read whole: its Web stream view (on every runtime) is all the range needs.
    const chunks: Uint8Array[] = []
    for await (const chunk of withStallTimeout(object.Body.transformToWebStream(), timeoutMs, stalled) as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk)
    return { chunks, size }
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
      // A window at a time (`windowedDownload`): a client that stops reading holds no connection
      // to the object store and, after a second, none of the bytes read for it.
      const version: { etag?: string } = {}
      const download = await windowedDownload({
        from: range?.start ?? 0,
        last: range?.end ?? Infinity,
        read: (from, to, signal) => readWindow(key, from, to, version, signal),
      })
      return download === null ? null : nodeBackedStream(download)
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
 * and an answer (an upload part's included) the upload bound. No socket idle timeout: a stalled
 * body is caught by `withStallTimeout`. No cap on connections (the SDK's is 50): the store bounds its
 * calls itself (`concurrentCalls`), their wait included in the timeout, where the SDK's queue is not.
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
type SdkBody = { transformToWebStream(): ReadableStream<Uint8Array> }

/** What `GetObject` of a range answers, of what the store uses. */
type RangeAnswer = { Body?: SdkBody; ContentRange?: string; ETag?: string }

function infoOf(size: number | undefined, etag: string | undefined): BlobInfo {
  return { size: size ?? 0, version: (etag ?? '').replace(/^W\//, '').replaceAll('"', '') }
}

/** Closes a body unread, and its connection. */
function discard(body: SdkBody): void {
  void body.transformToWebStream().cancel().catch(() => undefined)
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode
}

function isNotFound(error: unknown): boolean {
  const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } }
  return name === 'NotFound' || name === 'NoSuchKey' || $metadata?.httpStatusCode === 404
}
