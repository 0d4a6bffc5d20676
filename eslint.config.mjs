import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Node built-ins that reach outside the process (files, network, other processes). */
const nodeIo = [
  'child_process', 'cluster', 'dgram', 'dns', 'fs', 'fs/promises', 'http', 'http2', 'https', 'net', 'os', 'readline',
  'tls', 'worker_threads',
];

/** Packages that talk to a database, mail, HTTP, storage or the Temporal service. */
const ioPackages = [
  '@mikro-orm/*', 'pg', 'nodemailer', 'smtp-server', 'fastify', '@fastify/*', '@aws-sdk/*', '@temporalio/client', '@temporalio/worker',
];

export default tseslint.config(
  { ignores: ['dist/**', '.bench-build/**', 'node_modules/**', 'coverage/**', '.data/**', 'docs/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', require: 'readonly', module: 'writable', __dirname: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // The wall around workflows, as an allow-list: Temporal bundles everything a workflow imports
    // into its deterministic sandbox, so a workflow imports only the workflow API, the pure rules of
    // src/domain, other workflow files, and the activities' types (the worker runs them, not the bundle).
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          {
            regex: '^(?!@temporalio/workflow$|(\\.\\./)+src/domain/|\\./|\\.\\./activities(/|$))',
            message: 'Workflows import only @temporalio/workflow, ../src/domain/**, other workflow files and activity types: do I/O in an activity.',
          },
          { regex: '^\\.\\./activities(/|$)', allowTypeImports: true, message: 'Import activities as types only.' },
        ],
      }],
    },
  },
  {
    // The pure rules: src/domain imports nothing from the rest of src and does no I/O.
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: nodeIo.flatMap((name) => [name, `node:${name}`]).map((name) => ({ name, message: 'src/domain does no I/O.' })),
        patterns: [
          { regex: '^\\.\\./', message: 'src/domain imports nothing from the rest of src: keep it pure.' },
          { group: [...ioPackages], message: 'src/domain does no I/O.' },
        ],
      }],
    },
  },
  {
    // Platform adapters parse and verify what a platform sent: no database, HTTP, services or Temporal.
    files: ['src/webhooks/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { regex: '^\\.\\./(db|http|services|temporal)(/|$)', message: 'src/webhooks does not import db, http, services or temporal.' },
          { group: [...ioPackages], message: 'src/webhooks does no I/O.' },
        ],
      }],
    },
  },
  {
    // A promise nobody awaits loses its failure: await it, or `void` it with a comment saying why.
    files: ['src/**/*.ts', 'activities/**/*.ts', 'workflows/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
);
