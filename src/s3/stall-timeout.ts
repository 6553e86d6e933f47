import type { Readable, Transform } from 'node:stream'

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
 * The same for a Node stream (the SDK's body on Node), as a Node stream: the Node adapter pipes it
 * to the socket as it is. The timer runs only from the consumer asking for bytes (`_read`) until
 * the next arrive; a client that stopped reading never asks.
 */
export async function withNodeStallTimeout(body: Readable, ms: number, stalled: () => Error): Promise<Readable> {
  const { PassThrough, pipeline } = await import('node:stream')
  let timer: ReturnType<typeof setTimeout> | undefined
  const guard: Transform = new PassThrough({
    // Holds no more than the chunk in hand: the body's own buffer is what waits for a slow client.
    highWaterMark: 0,
    transform(chunk, _encoding, done) {
      clearTimeout(timer)
      timer = undefined
      done(null, chunk)
    },
    flush(done) {
      clearTimeout(timer)
      done()
    },
  })
  const read = guard._read.bind(guard)
  guard._read = (size) => {
    timer ??= setTimeout(() => guard.destroy(stalled()), ms)
    read(size)
  }
  guard.once('close', () => clearTimeout(timer))
  // Either side's end or failure ends both: a client gone destroys the body, and its connection.
  pipeline(body, guard, () => undefined)
  return guard
}
