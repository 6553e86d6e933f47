/** Resources rendered once as JSON text, with the link base filled in per request. */
import { expect, it } from 'vitest'
import { entityResourceSchema } from '../../src/contract/schemas.js'
import { fillResourceTemplate, fillResourceTemplateBytes, renderChangeResource, renderEntityResource } from '../../src/contract/resource-json.js'
import type { StoredEntity } from '../../src/contract/entity.js'

const entity: StoredEntity = {
  id: 'hr1',
  state: 'canonical',
  mergedInto: null,
  snapshot: {
    type: 'legislation',
    title: 'A \u0001 title with "quotes", \\ and \u2028',
    texts: [
      {
        textId: `txt_${'b'.repeat(32)}`,
        renditions: [{ renditionId: `rnd_${'a'.repeat(32)}`, conversion: 'original', mime: 'text/html', filename: 'bill.htm', sha256: 'f'.repeat(64) }],
      },
    ],
  },
}

it('renders an entity as its JSON:API resource: links on the base, no hash, every value as it was', () => {
  const resource = JSON.parse(fillResourceTemplate(renderEntityResource(entity), 'https://api.example/registry'))
  expect(entityResourceSchema.parse(resource)).toEqual(resource)
  expect(resource).toEqual({
    type: 'legislation',
    id: 'hr1',
    attributes: {
      title: entity.snapshot.title,
      texts: [
        {
          textId: `txt_${'b'.repeat(32)}`,
          renditions: [
            {
              renditionId: `rnd_${'a'.repeat(32)}`,
              conversion: 'original',
              mime: 'text/html',
              filename: 'bill.htm',
              links: { content: `https://api.example/registry/v1/entities/hr1/renditions/rnd_${'a'.repeat(32)}.htm` },
            },
          ],
        },
      ],
    },
    links: { self: 'https://api.example/registry/v1/entities/hr1' },
  })
})

it('fills only the placeholders it wrote: a value holding the same character keeps it, and a base holding $ patterns stays literal', () => {
  const base = "https://x.example/$&$'$`$$"
  const resource = JSON.parse(fillResourceTemplate(renderEntityResource(entity), base))
  expect(resource.attributes.title).toBe(entity.snapshot.title)
  expect(resource.links.self).toBe(`${base}/v1/entities/hr1`)
})

it('renders an entity without a type as type "entity", and a change with its fields and relationship', () => {
  expect(JSON.parse(fillResourceTemplate(renderEntityResource({ id: 'x', snapshot: { texts: [] } }), 'http://h')).type).toBe('entity')
  const change = JSON.parse(
    fillResourceTemplate(
      renderChangeResource({ changeId: 'echg_1', entityId: 'hr1', changeType: 'merge', changedKeys: ['title'], mergedInto: 'hr2', recordedAt: '2026-01-01T00:00:00Z', snapshot: entity.snapshot }),
      'http://h',
    ),
  )
  expect(change).toMatchObject({
    type: 'entity-change',
    id: 'echg_1',
    attributes: { title: entity.snapshot.title, changeType: 'merge', changedKeys: ['title'], mergedInto: 'hr2', recordedAt: '2026-01-01T00:00:00Z' },
    relationships: { entity: { data: { type: 'legislation', id: 'hr1' }, links: { related: 'http://h/v1/entities/hr1' } } },
  })
})

it('fills templates given as UTF-8 bytes (a page read joined from SQLite) exactly as their text, framed by before and after', () => {
  const other = { ...entity, id: 'x\u00e9', snapshot: { ...entity.snapshot, title: 'Ä İ ﬀ 😀 \u0001' } }
  const joined = [entity, other, entity].map(renderEntityResource).join(',')
  const base = "https://x.example/é\\$&\""
  const expected = `{"data":[${fillResourceTemplate(joined, base)}]}`
  const decode = (bytes: Uint8Array) => new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  // A plain Uint8Array (node:sqlite, bun:sqlite) and a Node Buffer (better-sqlite3) alike.
  for (const bytes of [new TextEncoder().encode(joined), Buffer.from(joined)]) {
    const filled = fillResourceTemplateBytes('{"data":[', bytes, ']}', base)
    expect(decode(filled)).toBe(expected)
    expect(JSON.parse(decode(filled)).data[1].attributes.title).toBe(other.snapshot.title)
  }
  expect(decode(fillResourceTemplateBytes('[', new Uint8Array(), ']', base))).toBe('[]')
})
