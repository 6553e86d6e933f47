import { pino, type DestinationStream, type Logger } from 'pino'
import type { LogFormat, LogLevel } from './log-levels.js'

export type { Logger } from 'pino'
export type { LogFormat, LogLevel } from './log-levels.js'

export interface LoggerOptions {
  /** Default `info`: a line for every request. */
  level?: LogLevel
  /** `json` (default): one JSON object a line, for log pipelines; `pretty`: for people at a terminal. */
  format?: LogFormat
  /** A file descriptor to write to (default 1, standard output), or a stream (JSON lines only). */
  destination?: number | DestinationStream
}

/**
 * How often the buffer is written out whatever it holds: at low traffic 4 KB take minutes to gather,
 * and an operator tailing the log must see a request's line (and its id) within a second. One
 * interval for the process (SonicBoom's `periodicFlush`, unref'd), nothing a line: the buffered
 * throughput stays; an idle server makes an empty write each time.
 */
const FLUSH_EVERY_MS = 500

/**
 * The registry's logger: pino, writing through a buffer (a write a request would cost more than the
 * request), written out at least every `FLUSH_EVERY_MS`, and at exit (pino's own exit handler);
 * `logger.flush()` before the process ends, as the CLI's shutdown does. Keys and the
 * Authorization header are never given to it; `redact` is there should a caller log a request anyway.
 */
export async function createLogger({ level = 'info', format = 'json', destination = 1 }: LoggerOptions = {}): Promise<Logger> {
  const options = { level, base: { name: 'entity-registry' }, redact: ['req.headers.authorization', 'headers.authorization', 'authorization'] }
  if (typeof destination !== 'number') return pino(options, destination)
  if (format === 'pretty') {
    // Loaded only when asked for: people read it, pipelines never need it.
    const { default: pretty } = await import('pino-pretty')
    return pino(options, pretty({ destination, sync: true, colorize: false, ignore: 'pid,hostname,name' }))
  }
  return pino(options, pino.destination({ dest: destination, sync: false, minLength: 4096, periodicFlush: FLUSH_EVERY_MS }))
}
