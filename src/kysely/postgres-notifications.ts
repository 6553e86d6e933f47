import type { ChangeNotifier } from '../ports/change-notifier.js'
import { pollingNotifier, watchWhileSubscribed } from '../live-feed/notifiers.js'

/** The channel the feed's writers notify, inside their transaction; the payload is their schema. */
export const FEED_CHANNEL = 'entity_registry_feed'

/**
 * How an instance hears of commits: `listen` (`LISTEN` on one connection of its own), `poll` (the
 * feed's head read every 250 ms; through a transaction pooler such as PgBouncer, where a session's
 * `LISTEN` does not last), or `auto`: `listen`, unless a notification sent through the store's pool
 * after `LISTEN` does not arrive within a second, as through a transaction pooler; then `poll`.
 */
export type FeedNotifications = 'auto' | 'listen' | 'poll'

/** The part of a `pg` client the listener uses. */
export interface ListenClient {
  query(text: string): Promise<{ rows: Record<string, unknown>[] }>
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown
  on(event: 'error' | 'end', listener: (error?: Error) => void): unknown
  /** Ends the connection (a pool's client: released and destroyed). */
  close(): Promise<void>
}

export interface PostgresNotifierOptions {
  mode: FeedNotifications
  /** A connection of the listener's own, connected. */
  connect: () => Promise<ListenClient>
  /** Sends `NOTIFY FEED_CHANNEL, payload` through the store's pool (another connection than the listener's). */
  notify: (payload: string) => Promise<void>
  /** The feed's head, for `poll`. */
  readHead: () => Promise<unknown>
  /** Told when `auto` falls back to polling. */
  onPolling?: (reason: string) => void
}

const HEAD_POLL_MS = 250
const PROBE_WAIT_MS = 1000
const RECONNECT_MIN_MS = 250
const RECONNECT_MAX_MS = 5000

/**
 * Commits to the feed in any process, on PostgreSQL: one listening connection an instance, made with
 * the first waiting request and ended with the last; re-made after a fault (the server restarted,
 * the connection cut), with a wake then, since commits meanwhile were not heard.
 */
export function postgresNotifier({ mode, connect, notify, readHead, onPolling }: PostgresNotifierOptions): ChangeNotifier {
  const polling = pollingNotifier(readHead, HEAD_POLL_MS)
  if (mode === 'poll') return polling
  /** Set once `auto` found that notifications do not arrive: from then on the head is read. */
  let pollInstead = false
  return watchWhileSubscribed((wake) => {
    let stopped = false
    let client: ListenClient | undefined
    let stopPolling: (() => void) | undefined
    let delay = RECONNECT_MIN_MS
    let retry: ReturnType<typeof setTimeout> | undefined

    /** `reason`: why, when found now (told once). */
    const poll = (reason?: string) => {
      pollInstead = true
      if (reason !== undefined) onPolling?.(reason)
      stopPolling = polling.subscribe(wake)
    }

    async function listen(): Promise<void> {
      if (stopped) return
      let probe: ((payload: string) => void) | undefined
      let listening: ListenClient | undefined
      try {
        listening = await connect()
        const connection = listening
        client = connection
        if (stopped) return void (await connection.close())
        const lost = () => {
          if (client !== connection) return
          client = undefined
          void connection.close().catch(() => {})
          if (!stopped) retry = setTimeout(() => void listen(), delay)
          delay = Math.min(delay * 2, RECONNECT_MAX_MS)
        }
        connection.on('error', lost)
        connection.on('end', lost)
        const schema = String((await connection.query('select current_schema() as schema')).rows[0]!.schema)
        connection.on('notification', (message) => {
          if (message.channel !== FEED_CHANNEL) return
          if (message.payload === schema) wake()
          else probe?.(message.payload ?? '')
        })
        await connection.query(`listen ${FEED_CHANNEL}`)
        if (mode === 'auto') {
          const token = `probe:${crypto.randomUUID()}`
          const arrived = new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(false), PROBE_WAIT_MS)
            probe = (payload) => {
              if (payload !== token) return
              clearTimeout(timer)
              resolve(true)
            }
          })
          await notify(token)
          if (!(await arrived)) {
            client = undefined
            await connection.close().catch(() => {})
            if (!stopped) poll('a notification sent after LISTEN did not arrive (a transaction pooler?): reading the feed head every 250 ms instead')
            return
          }
        }
        delay = RECONNECT_MIN_MS
        // Commits while nobody listened (before, or between connections) are heard of now.
        wake()
      } catch {
        if (listening !== undefined && client === listening) client = undefined
        await listening?.close().catch(() => {})
        if (!stopped) retry = setTimeout(() => void listen(), delay)
        delay = Math.min(delay * 2, RECONNECT_MAX_MS)
      }
    }

    if (pollInstead) poll()
    else void listen()
    return () => {
      stopped = true
      clearTimeout(retry)
      stopPolling?.()
      void client?.close().catch(() => {})
      client = undefined
    }
  })
}
