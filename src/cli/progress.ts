/** How far a long command (import, reindex) has come. */
export interface Progress {
  /** Counts `count` more units done; redraws at most once an interval. */
  add(count?: number): void
  /** Draws the final count and ends the line. */
  done(): void
}

export interface ProgressOptions {
  /** What is counted, in the plural: "lines", "entities". */
  unit: string
  /** Where to draw (default stderr). Nothing is drawn unless it is a terminal: logs and pipes stay clean. */
  stream?: NodeJS.WritableStream & { isTTY?: boolean }
  /** Least time between redraws (default 250 ms). */
  intervalMs?: number
}

const NOTHING: Progress = { add() {}, done() {} }
// Carriage return, then erase the line: each draw replaces the last one.
const REDRAW = '\r\x1b[2K'

/** A one-line counter on a terminal: `import: 12,345 lines, 4,321 lines/s, 2.9 s`. */
export function createProgress(label: string, { unit, stream = process.stderr, intervalMs = 250 }: ProgressOptions): Progress {
  if (!stream.isTTY) return NOTHING
  const started = performance.now()
  let count = 0
  let drawnAt = Number.NEGATIVE_INFINITY
  const line = (now: number) => {
    const seconds = (now - started) / 1000
    const rate = seconds > 0 ? Math.round(count / seconds) : 0
    return `${label}: ${count.toLocaleString('en-US')} ${unit}, ${rate.toLocaleString('en-US')} ${unit}/s, ${seconds.toFixed(1)} s`
  }
  return {
    add(more = 1) {
      count += more
      const now = performance.now()
      if (now - drawnAt < intervalMs) return
      drawnAt = now
      stream.write(REDRAW + line(now))
    },
    done() {
      stream.write(`${REDRAW}${line(performance.now())}\n`)
    },
  }
}
