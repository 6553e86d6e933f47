import type { EntityResource } from '../../client/types.js'
import type { Api, ApiAnswer } from './api.js'

export type ExportFormat = 'csv' | 'ndjson'

/** The CSV's columns: the id, the type and every contract field (texts are in the NDJSON export). */
const CSV_FIELDS = ['title', 'name', 'displayDate', 'jurisdiction', 'localIdentifier', 'localType', 'authority', 'status'] as const

const csvCell = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value)

function csvRows(entities: EntityResource[]): string {
  return entities.map((entity) => [entity.id, entity.type, ...CSV_FIELDS.map((field) => entity.attributes[field] ?? '')].map(csvCell).join(',') + '\r\n').join('')
}

function ndjsonLines(entities: EntityResource[]): string {
  return entities.map(({ type, id, attributes }) => `${JSON.stringify({ type, id, attributes })}\n`).join('')
}

/**
 * Every entity the filter matches, page by page (100 a request, following `links.next`): each page
 * becomes a part of the file as it comes, so the pages' documents are never held together.
 */
export async function exportEntities(api: Api, filter: string, format: ExportFormat, onPage: (entities: number) => void, signal: AbortSignal): Promise<Blob> {
  const parts: string[] = format === 'csv' ? [['id', 'type', ...CSV_FIELDS].join(',') + '\r\n'] : []
  let exported = 0
  for (let address: string | null = api.address('/v1/entities', { filter: filter === '' ? null : filter, 'page[limit]': '100' }); address !== null; ) {
    const page: ApiAnswer<EntityResource[]> = await api.get<EntityResource[]>(address, signal)
    const entities = page.document.data ?? []
    parts.push(format === 'csv' ? csvRows(entities) : ndjsonLines(entities))
    exported += entities.length
    onPage(exported)
    address = page.document.links?.next ?? null
  }
  return new Blob(parts, { type: format === 'csv' ? 'text/csv;charset=utf-8' : 'application/x-ndjson' })
}

/** Hands bytes to the browser as a download under this file name. */
export function saveFile(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob)
  const link = document.createElement('a')
  link.href = url
  link.download = filename
  document.body.append(link)
  link.click()
  link.remove()
  // After the browser has taken the download.
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}
