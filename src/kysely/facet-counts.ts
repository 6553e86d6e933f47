import { sql, type Kysely, type RawBuilder } from 'kysely'
import { encodeChangeId } from '../contract/change-id.js'
import { CONTRACT_COLUMNS, FACET_FIELDS, type FacetField } from '../contract/fields.js'
import { compareCodePoints } from '../gffs/evaluate.js'
import type { Qualifier } from '../gffs/types.js'
import type { FacetCounts, FacetQuery } from '../ports/entity-store.js'
import { FacetFilterTooBroadError } from '../ports/facet-errors.js'
import { qualifiersToSql } from './gffs-to-sql.js'
import type { RegistryDatabase } from './schema.js'
import type { SqlDialect } from './sql-dialect.js'

/**
 * Facet counts kept as data: `facet_counts` holds how many canonical entities have each combination
 * of the facet fields' values, kept by triggers on `entities` (so every way of writing, the bulk
 * paths included, keeps it). A filter on facet fields alone is answered from it, a few thousand
 * rows at most, whatever the number of entities; any other filter counts the matching entities.
 */

const FACET_COLUMNS = FACET_FIELDS.map((field) => CONTRACT_COLUMNS[field])

/** The statements that create `facet_counts`, its triggers, and fill it from the entities there are. */
export function facetCountsMigration(dialect: SqlDialect): RawBuilder<unknown>[] {
  const columns = sql.join(FACET_COLUMNS.map((column) => sql.ref(column)))
  const of = (row: 'new' | 'old') => sql.join(FACET_COLUMNS.map((column) => sql.ref(`${row}.${column}`)))
  // A combination's key: the values as a JSON array, which tells a missing value from an empty one.
  const combo = (values: RawBuilder<unknown>) => (dialect.name === 'sqlite' ? sql`json_array(${values})` : sql`json_build_array(${values})::text`)
  // Whether a row's facet values or its state changed (SQLite spells `is distinct from` `is not`).
  const distinct = dialect.name === 'sqlite' ? sql`is not` : sql`is distinct from`
  const changed = sql.join(
    ['state', ...FACET_COLUMNS].map((column) => sql`${sql.ref(`old.${column}`)} ${distinct} ${sql.ref(`new.${column}`)}`),
    sql` or `,
  )
  const create = sql`create table facet_counts (
    combo ${dialect.text} primary key,
    ${sql.join(FACET_COLUMNS.map((column) => sql`${sql.ref(column)} ${dialect.text}`))},
    count bigint not null)`
  const fill = sql`insert into facet_counts (combo, ${columns}, count)
    select ${combo(columns)}, ${columns}, count(*) from entities where state = 'canonical' group by ${columns}`
  const add = (row: 'new') => sql`insert into facet_counts (combo, ${columns}, count) values (${combo(of(row))}, ${of(row)}, 1)
    on conflict (combo) do update set count = facet_counts.count + 1`
  const remove = (row: 'old') => sql`update facet_counts set count = count - 1 where combo = ${combo(of(row))}`
  if (dialect.name === 'sqlite') {
    return [
      create,
      fill,
      sql`create trigger entities_facet_counts_insert after insert on entities when new.state = 'canonical' begin ${add('new')}; end`,
      sql`create trigger entities_facet_counts_delete after delete on entities when old.state = 'canonical' begin ${remove('old')}; end`,
      sql`create trigger entities_facet_counts_update after update on entities when ${changed} begin
        ${remove('old')} and old.state = 'canonical';
        insert into facet_counts (combo, ${columns}, count) select ${combo(of('new'))}, ${of('new')}, 1 where new.state = 'canonical'
          on conflict (combo) do update set count = facet_counts.count + 1;
      end`,
    ]
  }
  return [
    create,
    fill,
    sql`create function entity_registry_facet_counts() returns trigger language plpgsql as $$
      begin
        if tg_op <> 'INSERT' and old.state = 'canonical' then ${remove('old')}; end if;
        if tg_op <> 'DELETE' and new.state = 'canonical' then ${add('new')}; end if;
        return null;
      end $$`,
    sql`create trigger entities_facet_counts_insert_delete after insert or delete on entities for each row execute function entity_registry_facet_counts()`,
    sql`create trigger entities_facet_counts_update after update on entities for each row when (${changed}) execute function entity_registry_facet_counts()`,
  ]
}

const isFacetQualifier = (qualifier: Qualifier) => (FACET_FIELDS as readonly string[]).includes(qualifier.field)

type CountRow = { field: string | null; value: string | null; count: number | string; head: number | string | null }

/**
 * The counts in one statement, so that the total, every field's counts and the feed head are of one
 * snapshot. A filter on facet fields alone is counted from `facet_counts`. Any other is counted from
 * the entities it matches, read once; refused (`FacetFilterTooBroadError`) when its facet-field
 * qualifiers leave more than `scanLimit` entities to read.
 */
export async function countFacets(db: Kysely<RegistryDatabase>, dialect: SqlDialect, { qualifiers, fields, limit }: FacetQuery, scanLimit: number): Promise<FacetCounts> {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`a facet limit must be a whole number above 0, not ${limit}`)
  const keptOnly = qualifiers.every(isFacetQualifier)
  if (!keptOnly) {
    const candidates = await keptTotal(db, dialect, qualifiers.filter(isFacetQualifier))
    if (candidates > scanLimit) throw new FacetFilterTooBroadError(candidates, scanLimit)
  }
  // From the kept counts, or from the matching entities' facet columns, read once.
  const source = keptOnly
    ? sql`(select * from facet_counts where ${qualifiersToSql(qualifiers, dialect)}) as matched`
    : sql`matched`
  const count = keptOnly ? sql`coalesce(sum(count), 0)` : sql`count(*)`
  const parts = [
    sql`select null as field, null as value, ${count} as count, (select max(seq) from changes) as head from ${source}`,
    ...fields.map((field) => {
      const column = sql.ref(CONTRACT_COLUMNS[field])
      return sql`select * from (
        select ${sql.lit(field)} as field, ${column} as value, ${count} as count, cast(null as bigint) as head
        from ${source} where ${column} is not null
        group by ${column} having ${count} > 0 order by 3 desc, ${column} limit ${sql.lit(limit)}) as ${sql.ref(`counted_${field}`)}`
    }),
  ]
  const union = sql.join(parts, sql` union all `)
  const statement = keptOnly
    ? union
    : sql`with matched as materialized (
        select ${sql.join(FACET_COLUMNS.map((column) => sql.ref(column)))} from entities where state = 'canonical' and ${qualifiersToSql(qualifiers, dialect)}
      ) ${union}`
  const { rows } = await sql<CountRow>`${statement}`.execute(db)
  const facets: FacetCounts['facets'] = Object.fromEntries(fields.map((field) => [field, []]))
  let total = rows[0]!
  for (const row of rows) {
    if (row.field === null) total = row
    else facets[row.field as FacetField]!.push({ value: row.value!, count: Number(row.count) })
  }
  // SQL promises no order of a union's rows: each field's values are put in order here.
  for (const values of Object.values(facets)) values.sort((a, b) => b.count - a.count || compareCodePoints(a.value, b.value))
  return { total: Number(total.count), facets, feedHead: total.head === null ? null : encodeChangeId(Number(total.head)) }
}

/** Canonical entities that qualifiers on facet fields match, from the kept counts. */
async function keptTotal(db: Kysely<RegistryDatabase>, dialect: SqlDialect, qualifiers: readonly Qualifier[]): Promise<number> {
  const { rows } = await sql<{ total: number | string }>`select coalesce(sum(count), 0) as total from facet_counts where ${qualifiersToSql(qualifiers, dialect)}`.execute(db)
  return Number(rows[0]!.total)
}
