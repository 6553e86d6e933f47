import { CompiledQuery, type Compilable, type Kysely } from 'kysely'
import type { Qualifier } from '../gffs/types.js'
import { setNewest } from '../bounded-map.js'

/** Shapes kept compiled; the prepared-statement cache of the SQLite store holds as many. */
const MAX_SHAPES = 256

/** What every sentinel holds, whatever case folding or escaping made of it. */
const SENTINEL_MARKER = /shape-value-/i

export interface QueryShapesOptions {
  /**
   * A read begun in this turn of the event loop is shared with the same read (shape and values)
   * asked later in the same turn: ten clients asking one page at once make one statement, not ten
   * (through a transaction pooler each statement is planned anew and costs the pooler a hop). Only
   * where every read goes to a server, so that none ends in the turn it began: whatever asks in
   * this turn (a request, or code that saw a commit end) was there before the turn began, so before
   * the read went, and the read's snapshot is no older than its own would be.
   */
  shareReadsOfATurn?: boolean
}

/** A value bound to a query's parameter (an array, to PostgreSQL's `any`). */
export type ParameterValue = string | number | readonly string[]

/**
 * Runs a read-only statement outside Kysely, where the connection allows: its rows (the SQLite
 * store's, at once, when no query or transaction holds its connection), a promise of them (the
 * PostgreSQL store's, on a connection of its pool), or null to run it through Kysely instead.
 */
export type ImmediateRead = (sql: string, parameters: readonly unknown[]) => unknown[] | Promise<unknown[]> | null

interface CompiledShape {
  compiled: CompiledQuery
  /** Per compiled parameter: the index of the call's value it takes, or -1 for a constant. */
  slots: number[]
}

/**
 * Queries compiled once per shape. Kysely builds and compiles a query on every call, which costs
 * about as much as SQLite takes to run a page query. A shape (a query with its values left out,
 * named by `key`) is built once with sentinel values and compiled; each call runs that SQL with its
 * own values in the sentinels' places (a value bound twice, in both). A shape whose sentinels do not
 * all come through as parameters, or come through changed as well (a value case-folded, escaped or
 * inlined), is never cached: it is built with the call's values every time, as without this. So
 * `build` must bind each value as it is, or transform it in a way that changes a sentinel but
 * keeps its marker (sentinels hold capitals and control characters, which case folding and
 * escaping change). Every shape is a read: `readNow`, where given, may run it.
 */
export function createQueryShapes(db: Kysely<any>, readNow: ImmediateRead | null = null, { shareReadsOfATurn = false }: QueryShapesOptions = {}) {
  const shapes = new Map<string, CompiledShape | null>()
  /** Reads begun in this turn of the event loop, by shape and values (with `shareReadsOfATurn`). */
  const begunThisTurn = new Map<string, Promise<unknown[]>>()

  function compileShape(valueCount: number, build: (values: ParameterValue[]) => Compilable<unknown>): CompiledShape | null {
    // Mixed case, digits and control characters: case folding or any escaping changes a sentinel.
    const sentinels = Array.from({ length: valueCount }, (_, index) => `\u0000Shape-Value-${index}\u0000`)
    const compiled = build(sentinels).compile()
    const slots = compiled.parameters.map((parameter) => (typeof parameter === 'string' ? sentinels.indexOf(parameter) : -1))
    const changed = (text: unknown) => typeof text === 'string' && SENTINEL_MARKER.test(text)
    const found =
      sentinels.every((_, index) => slots.includes(index)) &&
      !changed(compiled.sql) &&
      compiled.parameters.every((parameter, index) => slots[index] !== -1 || !changed(parameter))
    return found ? { compiled, slots } : null
  }

  /** The rows of a shape's query: at once where `readNow` has them so, else a promise of them, which callers share: read them, never change them. */
  function read<Row>(key: string, values: ParameterValue[], build: (values: ParameterValue[]) => Compilable<Row>): Row[] | Promise<Row[]> {
    if (!shareReadsOfATurn) return readOnce(key, values, build)
    const asked = readKey(key, values)
    const begun = begunThisTurn.get(asked)
    if (begun !== undefined) return begun as Promise<Row[]>
    const rows = readOnce(key, values, build)
    if (!Array.isArray(rows)) {
      if (begunThisTurn.size === 0) nextTurn(() => begunThisTurn.clear())
      begunThisTurn.set(asked, rows)
    }
    return rows
  }

  function readOnce<Row>(key: string, values: ParameterValue[], build: (values: ParameterValue[]) => Compilable<Row>): Row[] | Promise<Row[]> {
    let shape = shapes.get(key)
    if (shape === undefined) {
      shape = compileShape(values.length, build)
      // Clients choose the shapes: the least recently compiled falls out past the bound.
      setNewest(shapes, key, shape, MAX_SHAPES)
    }
    if (shape === null) return db.executeQuery(build(values).compile()).then(rowsOf)
    const { compiled, slots } = shape
    const parameters = compiled.parameters.map((parameter, index) => (slots[index] === -1 ? parameter : values[slots[index]!]))
    return (readNow?.(compiled.sql, parameters) as Row[] | Promise<Row[]> | null) ?? db.executeQuery<Row>(CompiledQuery.raw(compiled.sql, parameters)).then(rowsOf)
  }

  return {
    read,
    /** `read` as a promise, rejected when the query fails. */
    execute: async <Row>(key: string, values: ParameterValue[], build: (values: ParameterValue[]) => Compilable<Row>): Promise<Row[]> => read(key, values, build),
  }
}

const rowsOf = <Row>(result: { rows: Row[] }) => result.rows
const readKey = (key: string, values: readonly ParameterValue[]) => `${key}\u0000${JSON.stringify(values)}`

/** The next turn of the event loop, after the I/O callbacks of this one (Deno has no global `setImmediate`). */
export const nextTurn: (run: () => void) => void = globalThis.setImmediate ?? ((run) => setTimeout(run, 0))

export type QueryShapes = ReturnType<typeof createQueryShapes>

/**
 * Qualifiers split into their shape (a key: fields, operators, negation, how many values) and their
 * values, with the way back: `withValues` puts other values (sentinels) in the same places.
 */
export function parameterizeQualifiers(qualifiers: readonly Qualifier[]) {
  const values: string[] = []
  const shape = qualifiers.map((qualifier) => {
    switch (qualifier.op) {
      case 'eq':
      case 'contains':
        values.push(...qualifier.values)
        return [qualifier.field, qualifier.op, qualifier.negated, qualifier.values.length]
      case 'range':
        for (const end of [qualifier.from, qualifier.to]) if (end !== null) values.push(end)
        return [qualifier.field, qualifier.op, qualifier.negated, qualifier.from !== null, qualifier.to !== null]
      default:
        values.push(qualifier.value)
        return [qualifier.field, qualifier.op, qualifier.negated]
    }
  })
  const withValues = (replacements: readonly ParameterValue[]): Qualifier[] => {
    let next = 0
    const take = () => String(replacements[next++])
    return qualifiers.map((qualifier): Qualifier => {
      switch (qualifier.op) {
        case 'eq':
        case 'contains':
          return { ...qualifier, values: qualifier.values.map(take) }
        case 'range':
          return { ...qualifier, from: qualifier.from === null ? null : take(), to: qualifier.to === null ? null : take() }
        default:
          return { ...qualifier, value: take() }
      }
    })
  }
  return { key: JSON.stringify(shape), values, withValues }
}
