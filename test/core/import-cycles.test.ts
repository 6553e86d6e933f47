/** No circles of imports in src/: each folder reads top to bottom, from what is used to what uses it. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, expect, it } from 'vitest'
import { importCycles } from '../support/import-graph.js'

it('src/ has no circle of imports, type-only and dynamic imports counted', () => {
  expect(importCycles(fileURLToPath(new URL('../../src', import.meta.url)))).toEqual([])
})

const fixture = mkdtempSync(join(tmpdir(), 'import-cycles-'))
afterAll(() => rmSync(fixture, { recursive: true, force: true }))

it('finds a circle however its imports are written', () => {
  const directory = join(fixture, 'src')
  // A circle through a file outside the folder is one too.
  writeFileSync(join(fixture, 'outside.ts'), `import type { F } from './src/f.js'\nexport type O = F`)
  const files: Record<string, string> = {
    'a.ts': `import type { B } from './b.js'\nexport type A = B`,
    'b.ts': `export type { C as B } from './c.js'`,
    'c.ts': `export type C = import('./a.js').A`,
    'd.ts': `export const d = () => import('./e.js')`,
    'e.ts': `import { d } from './d.js'\nexport const e = d`,
    'f.ts': `import type { O } from '../outside.js'\nexport type F = O | 1`,
    'g.ts': `import { e } from './e.js'\nexport const g = e`,
  }
  mkdirSync(directory)
  for (const [name, text] of Object.entries(files)) writeFileSync(join(directory, name), text)
  expect(importCycles(directory).sort()).toEqual([
    ['outside.ts', 'src/f.ts', 'outside.ts'],
    ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/a.ts'],
    ['src/d.ts', 'src/e.ts', 'src/d.ts'],
  ])
})
