/** One event of a `text/event-stream` body, with the fields the change feed sends. */
export interface ServerSentEvent {
  /** `event:`; `message` when absent, as EventSource names it. */
  event: string
  /** `id:`, when the event has one. */
  id: string | undefined
  data: string
}

/**
 * The events of a `text/event-stream` body as they arrive (comment lines, the stream's heartbeats,
 * skipped): the parse EventSource makes, for `event`, `id` and `data` (lines of data joined by
 * `\n`). Ends when the body does; breaking out of the loop cancels the body.
 */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffered = ''
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buffered += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n')
      let end: number
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const block = buffered.slice(0, end)
        buffered = buffered.slice(end + 2)
        const event = parseBlock(block)
        if (event !== null) yield event
      }
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
}

function parseBlock(block: string): ServerSentEvent | null {
  let event = 'message'
  let id: string | undefined
  const data: string[] = []
  let fields = 0
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue
    const colon = line.indexOf(':')
    const name = colon < 0 ? line : line.slice(0, colon)
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
    fields++
    if (name === 'event') event = value
    else if (name === 'id') id = value
    else if (name === 'data') data.push(value)
  }
  return fields === 0 ? null : { event, id, data: data.join('\n') }
}
