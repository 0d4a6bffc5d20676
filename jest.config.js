/** One run, three tiers (test/unit, test/integration, test/e2e) against real services. */
module.exports = {
  // jest's node environment; its workers end with process.exit() (see the file for why).
  testEnvironment: '<rootDir>/test/helpers/node-environment.js',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', {}],
    // ESM-only dependencies that Node 20 loads with require(esm) but jest's module system cannot:
    // transpiled to CommonJS for the tests only (@fastify/cookie: its dynamic import() of `cookie` becomes a require()).
    'node_modules/(cookie|content-disposition|@fastify/cookie)/.+\\.js$': ['ts-jest', { tsconfig: { allowJs: true, module: 'commonjs', isolatedModules: true } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(cookie|content-disposition|@fastify/cookie)/)'],
  // Files that mostly wait are kept apart (see the file).
  testSequencer: '<rootDir>/test/helpers/sequencer.js',
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  testTimeout: 60_000,
  // Three files at once on the two cores: a file spends much of its time waiting on the engine, the
  // database, timers and child processes (two at once left a third of the CPU idle). Their
  // connections fit PostgreSQL's default 100 through DATABASE_POOL_MAX (test/helpers/database.ts).
  // A worker whose heap passed 700 MB is replaced before its next file. Most of that is garbage V8
  // has not yet collected (the unit files' heap after a collection stays near 110 MB), but the run's
  // end waits for each worker's memory to go back to the system, about 0.2 ms per MB here: with a
  // 1 GB limit the last workers took 256-438 ms of jest-worker's 500 ms grace, with 700 MB 59-193 ms.
  maxWorkers: 3,
  workerIdleMemoryLimit: '700MB',
};
