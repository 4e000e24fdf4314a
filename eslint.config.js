// ESLint over src, test and bench: typescript-eslint's recommended type-checked rules, with the project's
// tsconfig.json as the type source. Layout is Biome's job (biome.json), never ESLint's. Each rule changed below
// says why; docs/decisions/0001-lint-and-format.md has the choice and its figures.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'openapi/**', 'seed/**', 'migrations/**'] },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Fastify's plugins, hooks and handlers are async by contract (the returned promise is how Fastify knows
      // they are done); many have nothing to await, and making them callbacks would change how they finish.
      '@typescript-eslint/require-await': 'off',
      // A leading underscore marks a parameter an interface requires but this implementation does not use, or a
      // property left out of a rest copy.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // A `never` in a template is the exhaustiveness check's message for a value the types say cannot occur.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNever: true }],
    },
  },
  {
    files: ['src/explorer/client/**/*.ts'],
    rules: {
      // The explorer's DOM handlers are async and show their own errors; a browser ignores what a listener returns.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // light-my-request's `response.json()` and `fetch`'s `json()` are `any`: tests read the body and assert its
      // shape with `expect`, which is the check these rules would ask for.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // The same untyped bodies: fixtures type them loosely and put their ids in URLs and failure messages.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      // `res.json() as Body` states the shape a test expects of an untyped body; the rule's flow analysis also
      // differs from tsc's under noUncheckedIndexedAccess (it drops assertions tsc then asks for).
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
    },
  },
);
