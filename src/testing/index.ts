/** `entity-registry/testing`: conformance kits for your own implementations of the ports. */
export { describeEntityStore } from './store-suite.js'
export type { TestRunner } from './runner.js'
export { httpConformanceCases, runHttpConformance, type ConformanceCase, type ConformanceResult, type ConformanceTarget } from './http-conformance.js'
