/**
 * The file in the root of an example model repository that records what built it (tools/model-builder,
 * `exampleRepositoryStamp`). Its presence marks a folder as the generated example repository, not a user's own:
 * the Pulumi program refuses to serve one by default (test models with random weights).
 */
export const STAMP_FILE_NAME = ".example-repository-stamp";
