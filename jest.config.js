/** One run, three tiers (test/unit, test/integration, test/e2e) against real services. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', {}],
    // ESM-only dependencies that Node 20 loads with require(esm) but jest's module system cannot:
    // transpiled to CommonJS for the tests only (@fastify/cookie: its dynamic import() of `cookie` becomes a require()).
    'node_modules/(cookie|content-disposition|@fastify/cookie)/.+\\.js$': ['ts-jest', { tsconfig: { allowJs: true, module: 'commonjs', isolatedModules: true } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(cookie|content-disposition|@fastify/cookie)/)'],
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  testTimeout: 60_000,
  // Three files at once on the two cores: a file spends much of its time waiting on the engine, the
  // database, timers and child processes (two at once left a third of the CPU idle). Their
  // connections fit PostgreSQL's default 100 through DATABASE_POOL_MAX (test/helpers/database.ts).
  // A worker whose heap grew past 1 GB (files keep what their servers allocated until the worker
  // ends) is replaced before its next file.
  maxWorkers: 3,
  workerIdleMemoryLimit: '1GB',
};
