import type { StoredEntity } from '../contract/entity.js'
import { nextTurn } from './query-shapes.js'

type Get = (id: string) => Promise<StoredEntity | null>

interface Waiting {
  resolve(entity: StoredEntity | null): void
  reject(error: unknown): void
}

/**
 * Gets by id asked in one turn of the event loop (the requests whose bytes one poll of the sockets
 * brought), read in one statement: every statement costs PostgreSQL its parse, plan and round trip,
 * and through a transaction pooler a hop more, whatever rows it reads. A lone get reads as before
 * (`readOne`: a named statement, or a planned read's call); several read `readAmong` at once. Each
 * batch is read after its gets were asked, so none sees an older snapshot than unbatched.
 */
export function batchedGets(readOne: Get, readAmong: (ids: string[]) => Promise<StoredEntity[]>): Get {
  let batch: Map<string, Waiting[]> | null = null
  const read = () => {
    const asked = batch!
    batch = null
    if (asked.size === 1) {
      const [id, waiting] = asked.entries().next().value as [string, Waiting[]]
      readOne(id).then(
        (entity) => waiting.forEach((one) => one.resolve(entity)),
        (error: unknown) => waiting.forEach((one) => one.reject(error)),
      )
      return
    }
    readAmong([...asked.keys()]).then(
      (entities) => {
        const byId = new Map(entities.map((entity) => [entity.id, entity]))
        for (const [id, waiting] of asked) for (const one of waiting) one.resolve(byId.get(id) ?? null)
      },
      (error: unknown) => {
        for (const waiting of asked.values()) for (const one of waiting) one.reject(error)
      },
    )
  }
  return (id) =>
    new Promise((resolve, reject) => {
      if (batch === null) {
        batch = new Map()
        nextTurn(read)
      }
      const waiting = batch.get(id)
      if (waiting === undefined) batch.set(id, [{ resolve, reject }])
      else waiting.push({ resolve, reject })
    })
}
