// `npm start`: the standalone server of `npm run build`, as a platform or a container runs it, on PORT
// (0: a free one) and HOST; prints `listening on http://HOST:PORT` once the app answers.
import { spawn } from 'node:child_process'
import { cpSync, existsSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'

if (!existsSync('.next/standalone')) {
  console.error('no .next/standalone: run npm run build first')
  process.exit(1)
}
// Where server.js is in the output: below the tracing root, at the app's place under it (the root
// of this checkout here, where the library is linked from).
const { relativeAppDir } = JSON.parse(readFileSync('.next/required-server-files.json', 'utf8'))
const app = join('.next/standalone', relativeAppDir)
// The browser's scripts and styles are not part of the trace: copied beside it, as Next's docs say.
cpSync('.next/static', join(app, '.next/static'), { recursive: true })

const host = process.env.HOST ?? '127.0.0.1'
let port = Number(process.env.PORT ?? 3000)
if (port === 0) {
  port = await new Promise((resolve) => {
    const probe = createServer().listen(0, host, () => {
      const { port: free } = probe.address()
      probe.close(() => resolve(free))
    })
  })
}

const server = spawn(process.execPath, [join(app, 'server.js')], {
  env: { ...process.env, PORT: String(port), HOSTNAME: host },
  stdio: ['ignore', 'inherit', 'inherit'],
})
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.kill(signal))
server.once('exit', (code) => process.exit(code ?? 0))

const url = `http://${host}:${port}`
for (let attempt = 0; attempt < 600; attempt += 1) {
  const answered = await fetch(url).then(() => true, () => false)
  if (answered) {
    console.log(`listening on ${url}`)
    break
  }
  await new Promise((resolve) => setTimeout(resolve, 100))
}
