// The ES module entry: the CommonJS one's exports (index.js), so the classes are the same
// objects — `instanceof` holds whichever way a program loads the package.
export * from './index.js';
export { default } from './index.js';
