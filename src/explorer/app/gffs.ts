/**
 * A GFFS equality value as the filter box should hold it: bare when it is plain (letters, digits,
 * `_`, `-`), else quoted, so that a space, comma, quote, `~`, `>` or `..` in it is read as text.
 */
export function gffsValue(value: string): string {
  return /^[\w-]+$/.test(value) ? value : `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`
}

/** The filter with `field:value` ANDed to it (unless it is already there). */
export function narrowFilter(filter: string, field: string, value: string): string {
  const term = `${field}:${gffsValue(value)}`
  const current = filter.trim()
  if (current === '') return term
  return ` ${current} `.includes(` ${term} `) ? current : `${current} ${term}`
}
