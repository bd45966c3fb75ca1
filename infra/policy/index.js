// Entry point the Pulumi CLI loads for this policy pack. The pack is TypeScript; tsx compiles it on load
// with the project's own TypeScript settings (Pulumi's bundled ts-node cannot read this tsconfig).
/* eslint-disable @typescript-eslint/no-require-imports -- plain CommonJS: node runs this file untranspiled */
require("tsx/cjs");
require("./policy-pack.ts");
