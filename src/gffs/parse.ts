import { isContractField } from '../contract/fields.js'
import { GffsError } from './errors.js'
import { GFFS_LIMITS, type GffsQuery, type Qualifier, type TextTerm } from './types.js'

export interface ParseOptions {
  /** Words and phrases are allowed only in search `q`; elsewhere they are `free_text_not_allowed`. */
  allowFreeText: boolean
}

interface RawTerm {
  text: string
  position: number
}

/** One parsed value and whether it was quoted (a quoted `*` is a literal star). */
interface ParsedValue {
  value: string
  quoted: boolean
}

const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const NESTED_FIELD_NAME = /^[A-Za-z0-9_]+([.[][A-Za-z0-9_\]]*)+$/

/** Parses a GFFS string (DESIGN section 5). Throws only `GffsError`. */
export function parseGffs(input: string, options: ParseOptions): GffsQuery {
  if (input.length > GFFS_LIMITS.maxLength) {
    throw new GffsError('invalid_filter', `is longer than ${GFFS_LIMITS.maxLength} characters`, null, GFFS_LIMITS.maxLength)
  }
  // No value holding U+0000 can match anything stored (no store keeps it), and PostgreSQL refuses it.
  const nul = input.indexOf('\u0000')
  if (nul !== -1) throw new GffsError('invalid_filter', `holds a NUL character at position ${nul}`, null, nul)
  const terms = splitTerms(input)
  if (terms.length > GFFS_LIMITS.maxTerms) {
    const extra = terms[GFFS_LIMITS.maxTerms]!
    throw new GffsError('invalid_filter', `has more than ${GFFS_LIMITS.maxTerms} terms`, extra.text, extra.position)
  }
  const query: GffsQuery = { qualifiers: [], text: [] }
  for (const term of terms) {
    const parsed = parseTerm(term)
    if (parsed.kind === 'qualifier') {
      query.qualifiers.push(parsed)
    } else if (!options.allowFreeText) {
      throw termError('free_text_not_allowed', term, 'is free text; only field qualifiers such as type:person are allowed here')
    } else {
      query.text.push(parsed)
    }
  }
  return query
}

function termError(code: GffsError['code'], term: RawTerm, problem: string): GffsError {
  return new GffsError(code, `term "${term.text}" at position ${term.position} ${problem}`, term.text, term.position)
}

/** Splits on unquoted white space; a quote runs to its closing quote (`\"` and `\\` escape). */
function splitTerms(input: string): RawTerm[] {
  const terms: RawTerm[] = []
  let index = 0
  while (index < input.length) {
    if (isSpace(input[index]!)) {
      index++
      continue
    }
    const start = index
    while (index < input.length && !isSpace(input[index]!)) {
      if (input[index] === '"') index = endOfQuoted(input, index, start)
      else index++
    }
    terms.push({ text: input.slice(start, index), position: start })
  }
  return terms
}

function isSpace(char: string): boolean {
  return char === ' ' || char === '\t' || char === '\n' || char === '\r'
}

/** Index just past the closing quote of the quoted string opening at `open`. */
function endOfQuoted(input: string, open: number, termStart: number): number {
  let index = open + 1
  while (index < input.length) {
    const char = input[index]
    if (char === '\\') index += 2
    else if (char === '"') return index + 1
    else index++
  }
  const text = input.slice(termStart)
  throw new GffsError('invalid_filter', `term "${text}" at position ${termStart} has an unclosed quote`, text, termStart)
}

function parseTerm(term: RawTerm): Qualifier | TextTerm {
  const negated = term.text.startsWith('-')
  const body = negated ? term.text.slice(1) : term.text
  if (body === '') throw termError('invalid_filter', term, 'is a lone "-"')
  if (body.startsWith('"')) {
    const { parsed, rest } = readValue(body, 0, term)
    if (rest !== body.length) throw termError('invalid_filter', term, 'has text after its closing quote')
    return { kind: 'phrase', negated, text: parsed.value }
  }
  const colon = body.indexOf(':')
  const quote = body.indexOf('"')
  if (colon === -1 || (quote !== -1 && quote < colon)) {
    if (quote !== -1) throw termError('invalid_filter', term, 'has a quote inside a word')
    return { kind: 'word', negated, text: body }
  }
  const field = body.slice(0, colon)
  if (field === '') throw termError('invalid_filter', term, 'has no field name before ":"')
  if (!FIELD_NAME.test(field)) {
    if (NESTED_FIELD_NAME.test(field)) {
      throw termError('nested_field_path', term, `names the nested path "${field}"; only top-level fields can be filtered`)
    }
    throw termError('invalid_filter', term, `has an invalid field name "${field}"`)
  }
  if (!isContractField(field)) {
    throw termError(
      'unsupported_field',
      term,
      `names the unsupported field "${field}"; allowed: type, title, name, displayDate, jurisdiction, localIdentifier, localType, authority, status`,
    )
  }
  return parseValueExpression(field, negated, body.slice(colon + 1), term)
}

function parseValueExpression(field: Qualifier['field'], negated: boolean, expression: string, term: RawTerm): Qualifier {
  if (expression === '') throw termError('invalid_filter', term, 'has no value after ":"')
  if (expression.startsWith('~')) {
    return { kind: 'qualifier', field, negated, op: 'contains', values: readValueList(expression.slice(1), term).map((v) => v.value) }
  }
  for (const [prefix, op] of [['>=', 'gte'], ['<=', 'lte'], ['>', 'gt'], ['<', 'lt']] as const) {
    if (expression.startsWith(prefix)) {
      const values = readValueList(expression.slice(prefix.length), term)
      if (values.length !== 1) throw termError('invalid_filter', term, `takes one value after "${prefix}"`)
      return { kind: 'qualifier', field, negated, op, value: values[0]!.value }
    }
  }
  const range = splitRange(expression, term)
  if (range) {
    const [from, to] = range.map((bound) => {
      const values = readValueList(bound, term)
      if (values.length !== 1) throw termError('invalid_filter', term, 'takes one value on each side of ".."')
      const only = values[0]!
      return !only.quoted && only.value === '*' ? null : only.value
    }) as [string | null, string | null]
    return { kind: 'qualifier', field, negated, op: 'range', from, to }
  }
  return { kind: 'qualifier', field, negated, op: 'eq', values: readValueList(expression, term).map((v) => v.value) }
}

/** The two sides of an unquoted `..`, or null when there is none. */
function splitRange(expression: string, term: RawTerm): [string, string] | null {
  let index = 0
  while (index < expression.length) {
    if (expression[index] === '"') {
      index = endOfQuoted(expression, index, 0)
      continue
    }
    if (expression.startsWith('..', index)) {
      const from = expression.slice(0, index)
      const to = expression.slice(index + 2)
      if (from === '' || to === '') throw termError('invalid_filter', term, 'needs a bound on each side of ".." (use * for an open end)')
      if (splitRange(to, term) !== null) throw termError('invalid_filter', term, 'has more than one ".."; a range has two bounds')
      return [from, to]
    }
    index++
  }
  return null
}

function readValueList(text: string, term: RawTerm): ParsedValue[] {
  const values: ParsedValue[] = []
  let index = 0
  for (;;) {
    const { parsed, rest } = readValue(text, index, term)
    values.push(parsed)
    if (values.length > GFFS_LIMITS.maxValues) {
      throw termError('invalid_filter', term, `has more than ${GFFS_LIMITS.maxValues} values`)
    }
    if (rest === text.length) return values
    if (text[rest] !== ',') throw termError('invalid_filter', term, 'has a quote inside a value')
    index = rest + 1
  }
}

/** Reads one value starting at `start`; `rest` is the index just after it. */
function readValue(text: string, start: number, term: RawTerm): { parsed: ParsedValue; rest: number } {
  if (text[start] === '"') {
    let value = ''
    let index = start + 1
    for (;;) {
      const char = text[index]
      if (char === undefined) throw termError('invalid_filter', term, 'has an unclosed quote')
      if (char === '"') return { parsed: { value, quoted: true }, rest: index + 1 }
      if (char === '\\') {
        const escaped = text[index + 1]
        if (escaped !== '"' && escaped !== '\\') throw termError('invalid_filter', term, 'has a backslash that escapes neither " nor \\')
        value += escaped
        index += 2
      } else {
        value += char
        index++
      }
    }
  }
  let index = start
  while (index < text.length && text[index] !== ',' && text[index] !== '"') index++
  if (index === start) throw termError('invalid_filter', term, 'has an empty value')
  return { parsed: { value: text.slice(start, index), quoted: false }, rest: index }
}
