/**
 * The few functions of a test runner the kit needs. Vitest, Jest, Mocha, `node:test` and `bun:test`
 * all have them: pass them in, and the kit's cases run in your own suite.
 */
export interface TestRunner {
  describe(name: string, body: () => void): unknown
  it(name: string, body: () => Promise<void> | void): unknown
  beforeEach(body: () => Promise<void> | void): unknown
  afterEach(body: () => Promise<void> | void): unknown
}
