import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

/**
 * The relative imports of a TypeScript file: static, type-only (`import type`, `export type ... from`,
 * `import('...')` in a type) and dynamic (`await import('...')`) alike, as each ties the files
 * together for whoever reads them.
 */
export function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false)
  const specifiers: string[] = []
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      specifiers.push(node.moduleSpecifier.text)
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      specifiers.push(node.argument.literal.text)
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      specifiers.push(node.arguments[0].text)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return specifiers.filter((specifier) => specifier.startsWith('.'))
}

/** The TypeScript file a relative specifier names (`./x.js` is `./x.ts` or `./x.tsx`), or null for another kind of file. */
function resolveImport(from: string, specifier: string): string | null {
  const target = resolve(dirname(from), specifier)
  const stem = target.replace(/\.js$/, '')
  for (const candidate of [`${stem}.ts`, `${stem}.tsx`, join(target, 'index.ts')]) if (existsSync(candidate)) return candidate
  return null
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.tsx?$/.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.test.ts'))
    .map((name) => join(directory, name))
}

/**
 * The circles of imports among the files under `directory` and the local files they import, each as
 * its files (relative to `directory`'s parent) in the order they import one another, back to the first.
 */
export function importCycles(directory: string): string[][] {
  const graph = new Map<string, string[]>()
  const pending = sourceFiles(directory)
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (graph.has(file)) continue
    const targets = importsOf(file).flatMap((specifier) => resolveImport(file!, specifier) ?? [])
    graph.set(file, targets)
    pending.push(...targets)
  }
  const name = (file: string) => relative(dirname(directory), file)
  return stronglyConnected(graph)
    .filter((component) => component.length > 1 || graph.get(component[0]!)!.includes(component[0]!))
    .map((component) => circleThrough(component, graph).map(name))
}

/** Tarjan's strongly connected components: each set of files that reach one another. */
function stronglyConnected(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const connect = (file: string) => {
    index.set(file, index.size)
    low.set(file, index.get(file)!)
    stack.push(file)
    onStack.add(file)
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        connect(target)
        low.set(file, Math.min(low.get(file)!, low.get(target)!))
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!))
      }
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== file)
      components.push(component)
    }
  }
  for (const file of graph.keys()) if (!index.has(file)) connect(file)
  return components
}

/** One circle inside a component, from its first file back to it: the shortest, found breadth first. */
function circleThrough(component: string[], graph: Map<string, string[]>): string[] {
  const members = new Set(component)
  const start = component.toSorted()[0]!
  const cameFrom = new Map<string, string>()
  const queue = [start]
  for (let at = 0; at < queue.length; at++) {
    const file = queue[at]!
    for (const target of graph.get(file)!) {
      if (target === start) {
        const circle = [start]
        for (let back: string | undefined = file; back !== undefined && back !== start; back = cameFrom.get(back)) circle.splice(1, 0, back)
        return [...circle, start]
      }
      if (members.has(target) && !cameFrom.has(target)) {
        cameFrom.set(target, file)
        queue.push(target)
      }
    }
  }
  return [start, start]
}
