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
  // Two files at once on the two cores: a file spends much of its time waiting on the engine, the
  // database and child processes. A worker whose heap grew past 1 GB (files keep what their servers
  // allocated until the worker ends) is replaced before its next file.
  maxWorkers: 2,
  workerIdleMemoryLimit: '1GB',
};
