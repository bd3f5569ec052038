// ESLint for the console: TypeScript's recommended rules, the rules of hooks, and feature
// boundaries as bulletproof-react draws them (a feature never imports another feature or the
// app shell; shared code never imports features or the app). Tests and MSW mocks may reach
// across features: they assemble the whole app on purpose.
//
// The boundaries use ESLint's own `no-restricted-imports` (the console imports through the `@/`
// alias; relative imports never climb out of a feature) rather than eslint-plugin-import-x, whose
// native resolver lists platform packages the package registry here does not carry, which left
// package-lock.json unusable for `npm ci`.
import js from '@eslint/js'
import reactHooks from 'eslint-plugin-react-hooks'
import globals from 'globals'
import { readdirSync } from 'node:fs'
import tseslint from 'typescript-eslint'

const features = readdirSync(new URL('./src/features', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)

const testFiles = ['**/*.test.{ts,tsx}', 'src/test/**', 'src/features/*/mocks/**']

// Relative imports that reach src/features/ itself (two levels up from a feature's
// subfolder, one from its root) would go around the alias rules.
const climbing = (levels) => ({
  regex: `^(\\.\\./){${levels},}`,
  message: 'Import shared code through @/…; relative imports stay inside their feature.',
})

const boundary = (patterns) => ['error', { patterns }]

export default tseslint.config(
  { ignores: ['dist', 'node_modules', 'e2e/screenshots', 'public'] },
  {
    files: ['**/*.{ts,tsx}'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: { ecmaVersion: 2022, globals: globals.browser },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // A feature imports neither another feature nor the app shell.
  ...features.flatMap((f) =>
    [
      [`src/features/${f}/*/**/*.{ts,tsx}`, 2],
      [`src/features/${f}/*.{ts,tsx}`, 1],
    ].map(([files, levels]) => ({
      files: [files],
      ignores: testFiles,
      rules: {
        'no-restricted-imports': boundary([
          {
            regex: `^@/features/(?!${f}(/|$))`,
            message: 'Features do not import each other: compose them in src/app.',
          },
          { regex: '^@/app(/|$)', message: 'Features do not import the app shell.' },
          climbing(levels),
        ]),
      },
    })),
  ),
  // Shared code sits below features and the app.
  {
    files: ['src/{components,hooks,lib,stores,types}/**/*.{ts,tsx}', 'src/config.ts'],
    ignores: testFiles,
    rules: {
      'no-restricted-imports': boundary([
        { regex: '^@/(features|app)(/|$)', message: 'Shared code does not import features or the app.' },
        { regex: '^(\\.\\./)+(features|app)(/|$)', message: 'Shared code does not import features or the app.' },
      ]),
    },
  },
  {
    files: ['e2e/**/*.mjs', '*.config.{js,ts}', 'vite.config.ts'],
    languageOptions: { globals: globals.node },
  },
)
