// parse5 5 ships no types (7 and later do): the one function used, as `html.ts` reads its tree.
declare module 'parse5' {
  export function parse(html: string): unknown
}
