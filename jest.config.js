// The extension's unit tests (src/__tests__/*.spec.ts): `jlpm test`, run by the README's
// test command through tests/test_tooling.py. TypeScript through ts-jest, with the
// tests' own tsconfig (jest's types), on jsdom with fetch (src/__tests__/environment.js).
module.exports = {
  testEnvironment: '<rootDir>/src/__tests__/environment.js',
  roots: ['<rootDir>/src'],
  testMatch: ['**/__tests__/**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'src/__tests__/tsconfig.json' }]
  },
  moduleNameMapper: {
    '\\.(css|svg)$': '<rootDir>/src/__tests__/stub.js'
  }
};
