import type { Readable } from 'node:stream'

/**
 * `body`, failing with `stalled()` when a read waits longer than `ms` for the source. Only a read
 * that is waiting counts: a consumer that reads slowly or pauses (a slow client) is never cut, but
 * an object store that stops sending mid-way no longer holds the download open for ever.
 */
export function withStallTimeout(body: ReadableStream<Uint8Array>, ms: number, stalled: () => Error): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let timer: ReturnType<typeof setTimeout> | undefined
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(stalled()), ms)
        })
        try {
          const { done, value } = await Promise.race([reader.read(), timeout])
          if (done) controller.close()
          else controller.enqueue(value)
        } catch (error) {
          void reader.cancel(error).catch(() => undefined)
          throw error
        } finally {
          clearTimeout(timer)
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    // Nothing is read ahead of the consumer: the source's own buffer is all this stream holds.
    { highWaterMark: 0 },
  )
}

/**
 * The same for a Node stream (the SDK's body on Node), watched in place rather than piped through a
 * stage of its own: each stage holds a chunk of up to 64 KiB (the size of a socket read) for a client
 * that stopped reading, and a thousand such clients made that 64 MB. The timer runs from the stream
 * asking its source for bytes (`_read`, when its consumer wants more) until the source gives some
 * (`push`); a consumer that stopped reading leaves the stream full, and it asks for nothing. The
 * Node adapter pipes the body to the socket as it is.
 */
export function withNodeStallTimeout(body: Readable, ms: number, stalled: () => Error): Readable {
  let timer: ReturnType<typeof setTimeout> | undefined
  const read = body._read.bind(body)
  const push = body.push.bind(body)
  body._read = (size) => {
    timer ??= setTimeout(() => body.destroy(stalled()), ms)
    read(size)
  }
  body.push = (chunk, encoding) => {
    clearTimeout(timer)
    timer = undefined
    return push(chunk, encoding)
  }
  body.once('close', () => clearTimeout(timer))
  return body
}
