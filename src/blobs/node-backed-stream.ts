import type { Readable } from 'node:stream'

/**
 * The key under which a Web stream made by `nodeBackedStream` keeps how to open its Node stream: the
 * Node adapter pipes that to the socket, skipping a Web stream's round trip (a Node stream turned Web
 * and back costs several times the reading, and holds a chunk at each stage for a stalled client).
 */
export const NODE_READABLE = Symbol.for('entity-registry.nodeReadable')

export type NodeBackedStream = ReadableStream<Uint8Array> & { [NODE_READABLE](): Readable }

/**
 * A Web stream of a Node stream: by the Node adapter read as that Node stream itself, by anything
 * else (Bun, Deno, a test) as a Web stream. Either way, one reader: the Web side is never read once
 * the Node side is taken. Given `open`, the Node stream is opened only when first read (a file
 * stays closed until then); given a stream already open, cancelling the Web side unread ends it.
 */
export function nodeBackedStream(source: (() => Readable) | Readable): NodeBackedStream {
  const open = typeof source === 'function' ? source : () => source
  let chunks: AsyncIterator<Buffer> | undefined
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        chunks ??= open()[Symbol.asyncIterator]()
        const { done, value } = await chunks.next()
        if (done) controller.close()
        else controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.byteLength))
      },
      async cancel() {
        // Ends the Node stream, which closes its file or connection.
        if (chunks) await chunks.return?.()
        else if (typeof source !== 'function') source.destroy()
      },
    },
    // Nothing is opened or read before a reader asks.
    { highWaterMark: 0 },
  )
  return Object.assign(stream, { [NODE_READABLE]: open })
}

export function isNodeBacked(body: ReadableStream<Uint8Array>): body is NodeBackedStream {
  return typeof (body as Partial<NodeBackedStream>)[NODE_READABLE] === 'function'
}
