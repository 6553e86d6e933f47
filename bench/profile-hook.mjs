// Preloaded (`node --import ./bench/profile-hook.mjs …`) into a server that profile-get.mjs profiles:
// SIGUSR2 starts V8's CPU profiler (or, with HEAP_SAMPLING set, its sampling heap profiler), the next
// SIGUSR2 stops it and writes the profile to $PROFILE, so that the profile holds the load and nothing
// of the start; and $PROFILE.gc.json, the garbage collections between the two signals.
// HEAP_SAMPLING=all samples every allocation; =survivors only what outlived a young-generation
// collection (objects kept past it, or allocated in the old generation at once).
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector'
import { constants, PerformanceObserver } from 'node:perf_hooks'

const session = new Session()
session.connect()
const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))))
const heap = process.env.HEAP_SAMPLING

const KINDS = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'young', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'full', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking' }
let collections = {}
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = KINDS[entry.detail?.kind] ?? 'other'
    collections[kind] ??= { count: 0, ms: 0 }
    collections[kind].count++
    collections[kind].ms += entry.duration
  }
}).observe({ entryTypes: ['gc'] })

let profiling = false
process.on('SIGUSR2', async () => {
  profiling = !profiling
  if (profiling) {
    collections = {}
    if (heap) {
      await post('HeapProfiler.enable')
      const survivors = heap === 'survivors'
      await post('HeapProfiler.startSampling', { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !survivors })
    } else {
      await post('Profiler.enable')
      await post('Profiler.setSamplingInterval', { interval: Number(process.env.CPU_PROFILE_INTERVAL ?? 200) })
      await post('Profiler.start')
    }
  } else {
    const { profile } = heap ? await post('HeapProfiler.stopSampling') : await post('Profiler.stop')
    writeFileSync(`${process.env.PROFILE}.gc.json`, JSON.stringify(collections))
    writeFileSync(process.env.PROFILE, JSON.stringify(profile))
  }
})
