// ESLint over src, test and bench: typescript-eslint's recommended type-checked rules, with the project's
// tsconfig.json as the type source. Formatting is Prettier's job (.prettierrc.json), never ESLint's.
// Why each rule below is changed is said beside it; see docs/decisions/0001-lint-and-format.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'openapi/**', 'seed/**', 'migrations/**'] },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {},
  },
);
