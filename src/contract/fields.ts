/** The GFFS field contract (spec 2.1): the only fields that filters may name and attributes may carry. */
export const CONTRACT_FIELDS = [
  'type',
  'title',
  'name',
  'displayDate',
  'jurisdiction',
  'localIdentifier',
  'localType',
  'authority',
  'status',
] as const

export type ContractField = (typeof CONTRACT_FIELDS)[number]

/** The contract fields that are attributes; `type` is the resource type instead. */
export const ATTRIBUTE_FIELDS = CONTRACT_FIELDS.filter(
  (field): field is Exclude<ContractField, 'type'> => field !== 'type',
)
export type AttributeField = (typeof ATTRIBUTE_FIELDS)[number]

/**
 * The column name of each contract field in the bundled stores' tables (SQL and LanceDB alike): the
 * only column names a filter can reach.
 */
export const CONTRACT_COLUMNS = {
  type: 'type',
  title: 'title',
  name: 'name',
  displayDate: 'display_date',
  jurisdiction: 'jurisdiction',
  localIdentifier: 'local_identifier',
  localType: 'local_type',
  authority: 'authority',
  status: 'status',
} as const satisfies Record<ContractField, string>

/**
 * The fields `/v1/facets` counts: those whose values name categories (each has an index over
 * canonical entities). Names, titles, identifiers and dates have about as many values as entities.
 */
export const FACET_FIELDS = ['type', 'jurisdiction', 'localType', 'authority', 'status'] as const satisfies readonly ContractField[]
export type FacetField = (typeof FACET_FIELDS)[number]

/** Top-level public snapshot keys that `changedKeys` may list. */
export type PublicKey = ContractField | 'texts'
export const PUBLIC_KEYS: readonly PublicKey[] = [...CONTRACT_FIELDS, 'texts']

const contractFieldSet: ReadonlySet<string> = new Set(CONTRACT_FIELDS)
export function isContractField(name: string): name is ContractField {
  return contractFieldSet.has(name)
}

/** Resource type of an entity whose public snapshot has no type (spec 1). */
export const EMPTY_ENTITY_TYPE = 'entity'
