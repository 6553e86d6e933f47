/** How far a long command (import, reindex) has come. */
export interface Progress {
  /** Counts `count` more units done; draws at most once an interval. */
  add(count?: number): void
  /**
   * How far through the whole the work is, in the whole's own measure (bytes of a file, changes of
   * a feed): with a `total`, percent and time left are shown.
   */
  reach(position: number, total?: number): void
  /** Draws the final state (and ends the line on a terminal). */
  done(): void
}

/**
 * `line`: one line redrawn on a terminal, nothing elsewhere (logs and pipes stay clean); `json`: one
 * JSON object a line, for programs, wherever the stream goes; `none`: nothing.
 */
export type ProgressFormat = 'line' | 'json' | 'none'
export const PROGRESS_FORMATS: readonly ProgressFormat[] = ['line', 'json', 'none']

export interface ProgressOptions {
  /** What is counted, in the plural: "lines", "changes"; the count's key in JSON. */
  unit: string
  format?: ProgressFormat
  /** Where to draw (default stderr). */
  stream?: NodeJS.WritableStream & { isTTY?: boolean }
  /** Least time between draws (default 250 ms on a terminal, a second in JSON). */
  intervalMs?: number
}

/** What a JSON progress line holds (`unit` names the count's key: `lines`, `changes`). */
export interface ProgressReport {
  command: string
  /** Units done per second since the start. */
  rate: number
  seconds: number
  /** Of the whole, when its size is known. */
  percent?: number
  /** At the rate so far, when the size is known. */
  etaSeconds?: number
  /** On the last line only. */
  done?: true
  [unit: string]: number | string | true | undefined
}

const NOTHING: Progress = { add() {}, reach() {}, done() {} }
// Carriage return, then erase the line: each draw replaces the last one.
const REDRAW = '\r\x1b[2K'

/**
 * `import: 12,345 lines, 4,321 lines/s, 2.9 s, 42%, 4 s left` on a terminal, or
 * `{"command":"import","lines":12345,"rate":4321,"seconds":2.9,"percent":42,"etaSeconds":4}`.
 */
export function createProgress(command: string, { unit, format = 'line', stream = process.stderr, intervalMs = format === 'json' ? 1000 : 250 }: ProgressOptions): Progress {
  if (format === 'none' || (format === 'line' && !stream.isTTY)) return NOTHING
  const started = performance.now()
  let count = 0
  let position = 0
  let total: number | undefined
  let drawnAt = Number.NEGATIVE_INFINITY
  const report = (now: number): ProgressReport => {
    const seconds = (now - started) / 1000
    const rate = seconds > 0 ? Math.round(count / seconds) : 0
    const state: ProgressReport = { command, [unit]: count, rate, seconds: Math.round(seconds * 10) / 10 }
    if (total === undefined || total <= 0) return state
    const fraction = Math.min(1, position / total)
    state.percent = Math.floor(fraction * 1000) / 10
    if (fraction > 0) state.etaSeconds = Math.round((seconds * (1 - fraction)) / fraction)
    return state
  }
  const line = (state: ProgressReport) => {
    const known = state.percent === undefined ? '' : `, ${state.percent}%${state.etaSeconds === undefined ? '' : `, ${state.etaSeconds.toLocaleString('en-US')} s left`}`
    return `${command}: ${count.toLocaleString('en-US')} ${unit}, ${state.rate.toLocaleString('en-US')} ${unit}/s, ${state.seconds.toFixed(1)} s${known}`
  }
  const draw = (state: ProgressReport) => stream.write(format === 'json' ? `${JSON.stringify(state)}\n` : REDRAW + line(state) + (state.done ? '\n' : ''))
  const maybeDraw = () => {
    const now = performance.now()
    if (now - drawnAt < intervalMs) return
    drawnAt = now
    draw(report(now))
  }
  return {
    add(more = 1) {
      count += more
      maybeDraw()
    },
    reach(at, of) {
      position = at
      if (of !== undefined) total = of
      maybeDraw()
    },
    done() {
      draw({ ...report(performance.now()), done: true })
    },
  }
}
