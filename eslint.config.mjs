// Lints the JupyterLab extension's TypeScript (`eslint src`): eslint's and
// typescript-eslint's recommended rules, with type information; `jlpm eslint:check`
// (tests/test_tooling.py runs it).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['lib/', 'node_modules/', 'hitl_nb/', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname
      }
    },
    rules: {
      // JupyterLab's convention: a class's options in a namespace of the same name.
      '@typescript-eslint/no-namespace': 'off',
      // Lumino's signals take the method and its `this` apart: connect(fn, thisArg).
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'none'
        }
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/explicit-function-return-type': [
        'error',
        { allowExpressions: true }
      ],
      eqeqeq: ['error', 'smart'],
      'no-console': ['error', { allow: ['warn', 'error'] }]
    }
  }
);
