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
