import { readServerSentEvents, type ServerSentEvent } from '../../src/client/server-sent-events.js'

export { type ServerSentEvent }

/** The stream's events (comments left out). */
export const readEvents = readServerSentEvents

/** The next `count` events of a stream, or fewer if it ends; throws past `timeoutMs`. */
export async function takeEvents(events: AsyncIterator<ServerSentEvent>, count: number, timeoutMs = 10_000): Promise<ServerSentEvent[]> {
  const taken: ServerSentEvent[] = []
  const deadline = Date.now() + timeoutMs
  while (taken.length < count) {
    const next = await Promise.race([events.next(), new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now())))])
    if (next === 'timeout') throw new Error(`${taken.length} of ${count} events within ${timeoutMs} ms: ${JSON.stringify(taken)}`)
    if (next.done) break
    taken.push(next.value)
  }
  return taken
}
