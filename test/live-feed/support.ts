/** Reading server-sent events in tests: the events of a `text/event-stream` body, as they come. */
export interface ServerSentEvent {
  event: string
  id: string | undefined
  data: string
}

/** The stream's events (comments left out), parsed as EventSource does for the fields the feed sends. */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder()
  let buffered = ''
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true })
    let end: number
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end)
      buffered = buffered.slice(end + 2)
      const fields = block.split('\n').filter((line) => !line.startsWith(':'))
      if (fields.length === 0) continue
      const value = (name: string) => fields.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2)
      yield { event: value('event') ?? 'message', id: value('id'), data: value('data') ?? '' }
    }
  }
}

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
