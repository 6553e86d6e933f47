import { z } from 'zod'
import { ATTRIBUTE_FIELDS, FACET_FIELDS, type FacetField } from './fields.js'
import { ENTITY_ID_PATTERN, RENDITION_ID_PATTERN, TEXT_ID_PATTERN } from './ids.js'

/** zod schemas of the interface's resources and documents (spec part 2), strict where the spec is. */

export const renditionSchema = z.strictObject({
  renditionId: z.string().regex(RENDITION_ID_PATTERN),
  conversion: z.string(),
  language: z.string().optional(),
  mime: z.string(),
  filename: z.string(),
  fetchedUrl: z.url().optional(),
  links: z.strictObject({ content: z.url() }),
})

export const textSchema = z.strictObject({
  textId: z.string().regex(TEXT_ID_PATTERN).optional(),
  localUrl: z.string().optional(),
  date: z.string().optional(),
  mime: z.string().optional(),
  type: z.string().optional(),
  renditions: z.array(renditionSchema),
})

const attributeShape = {
  ...(Object.fromEntries(ATTRIBUTE_FIELDS.map((field) => [field, z.string().optional()])) as Record<
    (typeof ATTRIBUTE_FIELDS)[number],
    z.ZodOptional<z.ZodString>
  >),
  texts: z.array(textSchema).optional(),
}

export const entityAttributesSchema = z.strictObject(attributeShape)

export const entityResourceSchema = z.strictObject({
  type: z.string(),
  id: z.string().regex(ENTITY_ID_PATTERN),
  attributes: entityAttributesSchema,
  links: z.strictObject({ self: z.url() }).optional(),
})

export const entityChangeResourceSchema = z.strictObject({
  type: z.literal('entity-change'),
  id: z.string().regex(/^echg_[0-9A-Za-z_-]+$/),
  attributes: z.strictObject({
    ...attributeShape,
    changeType: z.enum(['create', 'update', 'delete', 'merge']),
    changedKeys: z.array(z.enum(['type', ...ATTRIBUTE_FIELDS, 'texts'])),
    mergedInto: z.string().nullable(),
    recordedAt: z.iso.datetime(),
  }),
  relationships: z.strictObject({
    entity: z.strictObject({
      data: z.strictObject({ type: z.string(), id: z.string().regex(ENTITY_ID_PATTERN) }),
      links: z.strictObject({ related: z.url() }),
    }),
  }),
  /** Only with `filterScope=either`: whether the entity is in the filtered subset after the change. */
  meta: z.strictObject({ matchesFilter: z.boolean() }).optional(),
})

const pagedLinks = z.strictObject({ self: z.url(), next: z.url().optional() })
const cursorMeta = z.strictObject({ cursor: z.string().nullable() })

export const entityCollectionDocumentSchema = z.strictObject({
  data: z.array(entityResourceSchema),
  links: pagedLinks,
  meta: cursorMeta,
})

export const entityDocumentSchema = z.strictObject({
  data: entityResourceSchema,
  links: z.strictObject({ self: z.url() }),
})

export const searchDocumentSchema = z.strictObject({
  data: z.array(entityResourceSchema),
  links: z.strictObject({ self: z.url() }),
})

export const changesDocumentSchema = z.strictObject({
  data: z.array(entityChangeResourceSchema),
  links: pagedLinks,
  meta: cursorMeta,
})

const facetValuesSchema = z.array(z.strictObject({ value: z.string(), count: z.number().int().positive() }))

/** `/v1/facets`: no `data`; the counts in `meta`. */
export const facetsDocumentSchema = z.strictObject({
  links: z.strictObject({ self: z.url() }),
  meta: z.strictObject({
    total: z.number().int().nonnegative(),
    facets: z.strictObject(Object.fromEntries(FACET_FIELDS.map((field) => [field, facetValuesSchema.optional()])) as Record<FacetField, z.ZodOptional<typeof facetValuesSchema>>),
  }),
})

export const errorDocumentSchema = z.strictObject({
  errors: z
    .array(
      z.strictObject({
        status: z.string().optional(),
        title: z.string().optional(),
        detail: z.string().optional(),
        code: z.string().optional(),
        source: z.strictObject({ parameter: z.string().optional(), pointer: z.string().optional() }).optional(),
      }),
    )
    .min(1),
})
