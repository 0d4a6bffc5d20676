import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'assert', 'buffer', 'child_process', 'cluster', 'crypto', 'dgram', 'dns', 'events', 'fs', 'fs/promises',
  'http', 'http2', 'https', 'net', 'os', 'path', 'perf_hooks', 'process', 'readline', 'stream', 'timers',
  'tls', 'url', 'util', 'v8', 'vm', 'worker_threads', 'zlib',
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
    // The wall around workflows: Temporal bundles everything a workflow imports into its
    // deterministic sandbox, so no ORM, mail, HTTP or Node built-ins there (activities are types only).
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [
          ...nodeBuiltins.flatMap((name) => [
            { name, message: 'Node built-ins are not deterministic: keep them in activities.' },
            { name: `node:${name}`, message: 'Node built-ins are not deterministic: keep them in activities.' },
          ]),
        ],
        patterns: [
          { group: ['@mikro-orm/*', 'nodemailer', 'fastify', '@fastify/*', 'pg', 'smtp-server'], message: 'Workflows do not do I/O: call an activity.' },
          { group: ['**/db/**', '**/http/**', '**/mail/**', '**/storage/**', '**/dev/**', '**/services/**', '**/security/**', '**/webhooks/**', '**/temporal/**', '**/cli/**', '**/src/config', '**/src/config.*'], message: 'Workflows import only @temporalio/workflow, src/domain and activity types.' },
          { group: ['../activities', '../activities/*'], allowTypeImports: true, message: 'Import activities as types only.' },
        ],
      }],
    },
  },
);
