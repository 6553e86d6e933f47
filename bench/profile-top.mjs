// The frames with the most self time in V8 CPU profiles (.cpuprofile, from --cpu-prof or
// profile-hook.mjs), and the time under chosen frames (their own and their callees'):
//   node bench/profile-top.mjs FILE... [--top 30] [--under NAME,...]
// Paths are shown relative to the repository; idle, GC and (program) as V8 names them.
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { parseArgs } from 'node:util'
import { ROOT } from './lib.mjs'

const { values: options, positionals: files } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '30' }, under: { type: 'string', default: '' } } })
const under = options.under === '' ? [] : options.under.split(',')

for (const file of files) {
  const { nodes, samples, timeDeltas, startTime, endTime } = JSON.parse(readFileSync(file, 'utf8'))
  const byId = new Map(nodes.map((node) => [node.id, node]))
  const parentOf = new Map()
  for (const node of nodes) for (const child of node.children ?? []) parentOf.set(child, node.id)
  const nameOf = ({ callFrame: { functionName, url, lineNumber } }) =>
    `${functionName || '(anonymous)'} ${url === '' ? '' : `${relative(ROOT, url.replace(/^file:\/\//, ''))}:${lineNumber + 1}`}`.trim()
  const self = new Map()
  const inside = new Map(under.map((name) => [name, 0]))
  for (let index = 0; index < samples.length; index++) {
    const ms = (timeDeltas[index + 1] ?? 0) / 1000
    const node = byId.get(samples[index])
    const name = nameOf(node)
    self.set(name, (self.get(name) ?? 0) + ms)
    const seen = new Set()
    for (let id = node.id; id !== undefined; id = parentOf.get(id)) {
      const functionName = byId.get(id).callFrame.functionName
      for (const wanted of under) if (functionName === wanted && !seen.has(wanted)) seen.add(wanted) && inside.set(wanted, inside.get(wanted) + ms)
    }
  }
  const total = (endTime - startTime) / 1000
  const busy = total - (self.get('(idle)') ?? 0)
  console.log(`${file}: ${total.toFixed(0)} ms profiled, ${busy.toFixed(0)} ms not idle`)
  for (const [name, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(options.top))) console.log(`  ${ms.toFixed(0).padStart(7)} ms ${((ms / busy) * 100).toFixed(1).padStart(5)}%  ${name}`)
  for (const [name, ms] of inside) console.log(`  under ${name}: ${ms.toFixed(0)} ms (${((ms / busy) * 100).toFixed(1)}%)`)
}
